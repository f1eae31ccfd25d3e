import { BlockList, isIP } from 'node:net';

/**
 * Addresses a webhook may not reach unless private targets are allowed: loopback, private
 * (RFC 1918, unique-local), link-local (incl. cloud metadata 169.254.169.254), carrier-grade NAT,
 * "this network", multicast, reserved and documentation ranges, and their IPv4-mapped IPv6 forms.
 */
const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  blocked.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001:db8::', 32],
  ['2001::', 32],
  ['2002::', 16],
] as const)
  blocked.addSubnet(net, prefix, 'ipv6');

/** True when `address` (an IP literal) is private, loopback, link-local or otherwise not public. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family === 6) {
    const lower = address.toLowerCase();
    // IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible forms: judge the IPv4 address inside.
    const mapped =
      /^(?:0*:)*(?:ffff:)?(\d+\.\d+\.\d+\.\d+)$/.exec(lower) ??
      /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
    if (mapped) {
      const v4 = mapped.length === 2 ? mapped[1] : hexPairToV4(mapped[1], mapped[2]);
      return blocked.check(v4, 'ipv4');
    }
    return blocked.check(address, 'ipv6');
  }
  return true; // not an IP address at all: never treat as public
}

function hexPairToV4(hi: string, lo: string): string {
  const a = parseInt(hi, 16);
  const b = parseInt(lo, 16);
  return `${a >> 8}.${a & 255}.${b >> 8}.${b & 255}`;
}
