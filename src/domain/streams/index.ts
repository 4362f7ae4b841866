// Streamed replies: start, append, finish, and the sweeper that finishes idle streams.
export { appendToStreamingMessage, finishStreamingMessage, startStreamingMessage } from './streams.ts'
export { startStreamSweeper } from './sweeper.ts'
