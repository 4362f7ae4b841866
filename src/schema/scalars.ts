import { GraphQLScalarType } from 'graphql'
import { DateTimeResolver, JSONResolver, SafeIntResolver } from 'graphql-scalars'
import { builder } from './builder.ts'

/**
 * DateTime as graphql-scalars checks and parses it, but serialized to its ISO string here (the same
 * text JSON.stringify writes for a Date): a Date left in the result makes JSON.stringify call its
 * toJSON, which doubled the cost of stringifying a replayed MessageEvent's frame.
 */
const DateTime = new GraphQLScalarType({
  ...DateTimeResolver.toConfig(),
  serialize: (value) => DateTimeResolver.serialize(value).toISOString(),
})

builder.addScalarType('DateTime', DateTime)
builder.addScalarType('SafeInt', SafeIntResolver)
builder.addScalarType('JSON', JSONResolver)
