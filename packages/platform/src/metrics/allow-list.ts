import net from 'node:net';

/**
 * A matcher for comma-separated addresses and CIDR ranges (IPv4 and IPv6), e.g.
 * `127.0.0.0/8,::1/128,10.0.0.0/8`. IPv4 peers seen as IPv4-mapped IPv6 (`::ffff:10.1.2.3`) match
 * IPv4 ranges. Throws on a malformed entry.
 */
export function metricsAllowList(spec: string): (address: string | undefined) => boolean {
  const list = new net.BlockList();
  for (const entry of spec
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean)) {
    const [address, bits] = entry.split('/');
    const type = net.isIPv6(address) ? 'ipv6' : net.isIPv4(address) ? 'ipv4' : undefined;
    const prefix = bits === undefined ? (type === 'ipv6' ? 128 : 32) : Number(bits);
    if (!type || !Number.isInteger(prefix) || prefix < 0 || prefix > (type === 'ipv6' ? 128 : 32)) {
      throw new Error(`RUNPLANE_METRICS_ALLOW: "${entry}" is not an address or CIDR range`);
    }
    list.addSubnet(address, prefix, type);
  }
  return (address) => {
    if (!address) return false;
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
    if (mapped) return list.check(mapped, 'ipv4');
    return net.isIPv6(address)
      ? list.check(address, 'ipv6')
      : net.isIPv4(address) && list.check(address, 'ipv4');
  };
}
