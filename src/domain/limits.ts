/** Input limits; each is listed in README.md. */
export const LIMITS = {
  pageSize: 100,
  defaultPageSize: 20,
  clientMessageIdLength: 128,
  textLength: 10_000,
  titleLength: 200,
  handleLength: 128,
  displayNameLength: 128,
  usersPerUpsert: 100,
  membersPerCall: 100,
  mentionsPerMessage: 100,
  visibleToPerMessage: 100,
} as const
