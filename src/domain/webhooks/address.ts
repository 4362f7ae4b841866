import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import { BlockList, isIP, type LookupFunction } from 'node:net'

/**
 * Where a webhook may point. The receiver is hostile: an address in a loopback, private, link-local,
 * shared, multicast or cloud-metadata range is refused unless an allowed network holds it, both when
 * the webhook is saved and when each request connects (DNS can change in between).
 */
export type AddressRules = { allowedNetworks: readonly string[]; allowLoopback: boolean }

const REFUSED_V4 = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, and 169.254.169.254, the clouds' metadata service
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 3], // multicast and reserved, up to 255.255.255.255
] as const
const REFUSED_V6 = [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7], // unique local, including AWS's metadata address fd00:ec2::254
  ['fe80::', 10],
  ['ff00::', 8],
] as const

const refused = new BlockList()
for (const [net, prefix] of REFUSED_V4) refused.addSubnet(net, prefix, 'ipv4')
for (const [net, prefix] of REFUSED_V6) refused.addSubnet(net, prefix, 'ipv6')
const loopback = new BlockList()
loopback.addSubnet('127.0.0.0', 8, 'ipv4')
loopback.addAddress('::1', 'ipv6')

/** "10.1.0.0/16,fd00::/8" as a BlockList; a malformed entry throws (config/env.ts reports it). */
function parseNetworks(networks: readonly string[]): BlockList {
  const list = new BlockList()
  for (const entry of networks) {
    const [net = '', prefix] = entry.trim().split('/')
    const family = isIP(net) === 6 ? 'ipv6' : isIP(net) === 4 ? 'ipv4' : null
    if (!family) throw new Error(`"${entry}" is not a network such as 10.0.0.0/8`)
    if (prefix === undefined) list.addAddress(net, family)
    else list.addSubnet(net, Number(prefix), family)
  }
  return list
}

/** Why `address` may not be connected to, or null when it may. */
function refusal(address: string, rules: AddressRules, allowed = parseNetworks(rules.allowedNetworks)) {
  // An IPv4-mapped IPv6 address is judged as the IPv4 address it carries.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1]
  const ip = mapped ?? address
  const family = isIP(ip) === 6 ? 'ipv6' : 'ipv4'
  if (allowed.check(ip, family)) return null
  if (rules.allowLoopback && loopback.check(ip, family)) return null
  return refused.check(ip, family) ? `the address ${ip} is private, loopback, link-local or reserved` : null
}

/**
 * A `lookup` for http.request that resolves like Node's and fails the connection when any resolved
 * address is refused: the check and the connection use the same answer.
 */
export function guardedLookup(rules: AddressRules): LookupFunction {
  const allowed = parseNetworks(rules.allowedNetworks)
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 4)
      const bad = addresses.map((a) => refusal(a.address, rules, allowed)).find((r) => r !== null)
      if (bad) return callback(Object.assign(new Error(bad), { code: 'EADDRREFUSED' }), '', 4)
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses)
      callback(null, addresses[0]!.address, addresses[0]!.family)
    })
  }
}

/** Resolves `hostname` through the guard: the first refusal's reason, or null when every address may be used. */
export function checkHost(hostname: string, rules: AddressRules): Promise<string | null> {
  const host = hostname.replace(/^\[(.*)\]$/, '$1')
  return new Promise((resolve) => {
    guardedLookup(rules)(host, { all: true }, (error) =>
      resolve(error ? (error.code === 'EADDRREFUSED' ? error.message : `${host} does not resolve`) : null),
    )
  })
}
