import { lexicographicSortSchema } from 'graphql'
import { builder } from './builder.ts'
import './scalars.ts'
import './enums.ts'
import './user.ts'
import './conversation.ts'
import './content.ts'
import './message.ts'
import './viewer.ts'
import './node.ts'
import './lifecycle.ts'
import './userActions.ts'
import './quote.ts'
import './moderation.ts'
import './admin.ts'
import './search.ts'
import './reads.ts'
import './pins.ts'
import './reactions.ts'
import './stickers.ts'
import './files.ts'
import './conversationSettings.ts'
import './subscription.ts'
import './sync.ts'

builder.queryType({})
builder.mutationType({})

export const schema = lexicographicSortSchema(builder.toSchema())
