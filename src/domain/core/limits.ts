/** Input limits; each is listed for users in docs/messages.md. */
export const LIMITS = {
  pageSize: 100,
  defaultPageSize: 20,
  /** Query.sync's `first`: 1..500, 100 when omitted. */
  syncBatch: 500,
  defaultSyncBatch: 100,
  clientMessageIdLength: 128,
  reportReasonLength: 500,
  textLength: 10_000,
  titleLength: 200,
  handleLength: 128,
  displayNameLength: 128,
  usersPerUpsert: 100,
  membersPerCall: 100,
  mentionsPerMessage: 100,
  visibleToPerMessage: 100,
  /** deleteMessagesForMe / restoreMessagesForMe ids per call. */
  messagesPerAction: 100,
  /** Webhooks per user (LIMIT_REACHED past it), and conversations one webhook may name. */
  webhooksPerUser: 10,
  webhookConversations: 100,
  /** Push devices per user (LIMIT_REACHED past it), a token's and an appId's length. */
  pushDevicesPerUser: 20,
  pushTokenLength: 4096,
  pushAppIdLength: 255,

  /** Message content (docs/messages.md "Content kinds"). Parley stores links to media, never the bytes. */
  urlLength: 2048,
  /** Declared sizes: at most 2 GB (GraphQL Int stops at 2^31-1 anyway). */
  mediaBytes: 2_000_000_000,
  /** Image and video width/height in pixels. */
  mediaPixels: 20_000,
  /** Audio and video duration: 1 ms up to 4 hours. */
  mediaDurationMs: 4 * 60 * 60 * 1000,
  fileNameLength: 255,
  mimeTypeLength: 255,
  stickerIdLength: 128,
  stickerLabelLength: 100,
  cardTypeLength: 64,
  /** CARD data: a JSON object of at most this many bytes (UTF-8 of its JSON text). */
  cardDataBytes: 16 * 1024,
  /** CARD data: objects and arrays nested at most this deep (the data object itself is level 1). */
  cardDataDepth: 32,
  materialTitleLength: 200,
  materialDigestLength: 1000,
  /** Merged forward: 1..100 source messages, and the snapshot's JSON at most 1 MiB (nested forwards count fully). */
  forwardMessages: 100,
  forwardTitleLength: 200,
  forwardSnapshotBytes: 1024 * 1024,
  /** Saved stickers a user keeps ("add to stickers"). */
  savedStickers: 300,
} as const
