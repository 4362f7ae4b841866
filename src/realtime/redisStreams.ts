import type { Redis } from 'ioredis'
import { conversationTopic } from './events.ts'
import type { AppendOutcome, StreamKey, StreamStates } from './streams.ts'

/** A stream's hash lives this long after its last change (a stream nobody finishes is swept long before). */
const STATE_TTL_SECONDS = 24 * 60 * 60

const stateKey = (key: StreamKey) => `parley:stream:${key.conversationId}:${key.seq}`

/**
 * streams.ts's checkAppend and append in one script: the check, the new state and the PUBLISH of
 * the `stream` event run atomically, so deltas reach every instance in sequence order. Text is
 * counted in UTF-16 units by the caller (ARGV[4], the delta's length), as the text limit counts.
 * KEYS: state, topic. ARGV: senderId, sequence, delta, deltaLength, now, storeEveryMs, maxChars,
 * perSecond, conversationId, seq, ttl.
 */
const APPEND = `
local s = redis.call('HMGET', KEYS[1], 'senderId', 'sequence', 'text', 'length', 'storedAt', 'windowStart', 'inWindow')
if not s[1] then return {'unknown'} end
if s[1] ~= ARGV[1] then return {'notSender'} end
local sequence = tonumber(s[2])
local wanted = tonumber(ARGV[2])
if wanted == sequence then return {'repeat', s[3]} end
if wanted ~= sequence + 1 then return {'gap', tostring(sequence + 1)} end
local length = tonumber(s[4]) + tonumber(ARGV[4])
if length > tonumber(ARGV[7]) then return {'tooLong'} end
local now = tonumber(ARGV[5])
local windowStart = tonumber(s[6])
local inWindow = tonumber(s[7])
if now - windowStart >= 1000 then windowStart = now; inWindow = 0 end
if inWindow >= tonumber(ARGV[8]) then return {'rateLimited'} end
local text = s[3] .. ARGV[3]
local storedAt = tonumber(s[5])
local store = '0'
if now - storedAt >= tonumber(ARGV[6]) then store = '1'; storedAt = now end
redis.call('HSET', KEYS[1], 'sequence', wanted, 'text', text, 'length', length, 'touchedAt', now,
  'storedAt', storedAt, 'windowStart', windowStart, 'inWindow', inWindow + 1)
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[11]))
redis.call('PUBLISH', KEYS[2], cjson.encode({type = 'stream', conversationId = tonumber(ARGV[9]),
  seq = tonumber(ARGV[10]), sequence = wanted, delta = ARGV[3], text = text}))
return {'appended', text, store}
`

/** Writes a stream's state unless one exists. KEYS: state. ARGV: senderId, sequence, text, length, touchedAt, ttl. */
const OPEN = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'senderId', ARGV[1], 'sequence', ARGV[2], 'text', ARGV[3], 'length', ARGV[4],
  'touchedAt', ARGV[5], 'storedAt', ARGV[5], 'windowStart', 0, 'inWindow', 0)
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[6]))
return 1
`

type AppendReply = [string, string?, string?]

/**
 * Stream states shared by every instance through Redis (the bus's publishing connection): any
 * instance may take the next delta, and one that dies loses nothing of the text so far.
 */
export function redisStreamStates(redis: Redis): StreamStates {
  return {
    async open(key, state) {
      await redis.eval(
        OPEN,
        1,
        stateKey(key),
        state.senderId,
        state.sequence,
        state.text,
        state.text.length,
        state.touchedAt,
        STATE_TTL_SECONDS,
      )
    },
    async append(a, limits) {
      const reply = (await redis.eval(
        APPEND,
        2,
        stateKey(a),
        conversationTopic(a.conversationId),
        a.senderId,
        a.sequence,
        a.delta,
        a.delta.length,
        a.now,
        limits.storeEveryMs,
        limits.maxChars,
        limits.perSecond,
        a.conversationId,
        a.seq,
        STATE_TTL_SECONDS,
      )) as AppendReply
      return outcomeOf(reply)
    },
    async peek(key) {
      const s = await redis.hgetall(stateKey(key))
      if (!s.senderId) return null
      return {
        senderId: Number(s.senderId),
        sequence: Number(s.sequence),
        text: s.text ?? '',
        touchedAt: Number(s.touchedAt),
      }
    },
    async close(key) {
      await redis.del(stateKey(key))
    },
  }
}

function outcomeOf([result, a, b]: AppendReply): AppendOutcome {
  switch (result) {
    case 'appended':
      return { result, text: a!, store: b === '1' }
    case 'repeat':
      return { result, text: a! }
    case 'gap':
      return { result, expected: Number(a) }
    default:
      return { result: result as 'unknown' | 'notSender' | 'tooLong' | 'rateLimited' }
  }
}
