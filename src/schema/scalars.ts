import { DateTimeResolver, JSONResolver, SafeIntResolver } from 'graphql-scalars'
import { builder } from './builder.ts'

builder.addScalarType('DateTime', DateTimeResolver)
builder.addScalarType('SafeInt', SafeIntResolver)
builder.addScalarType('JSON', JSONResolver)
