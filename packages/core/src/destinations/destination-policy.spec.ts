import { DestinationPolicy, ipLiteralHost, isValidCidr, localhostNameOf } from './destination-policy';

describe('DestinationPolicy (PRODUCT.md §5.4)', () => {
  const strict = new DestinationPolicy();

  it.each([
    ['127.0.0.1', 'a loopback address'],
    ['10.1.2.3', 'a private address'],
    ['172.31.255.255', 'a private address'],
    ['192.168.0.1', 'a private address'],
    ['169.254.169.254', 'a link-local address'],
    ['100.64.0.1', 'a carrier-grade NAT address'],
    ['0.0.0.0', 'the unspecified address'],
    ['224.0.0.251', 'a multicast address'],
    ['255.255.255.255', 'the broadcast address'],
    ['240.0.0.1', 'a reserved address'],
    ['::1', 'a loopback address'],
    ['::', 'the unspecified address'],
    ['fe80::1', 'a link-local address'],
    ['fc00::1', 'a unique-local address'],
    ['fd12:3456::1', 'a unique-local address'],
    ['ff02::1', 'a multicast address'],
    ['::ffff:127.0.0.1', 'a loopback address'],
    ['::ffff:10.0.0.1', 'a private address'],
    ['::ffff:169.254.169.254', 'a link-local address'],
    // Every other IPv6 form that carries an IPv4 address, whatever address it carries.
    ['::127.0.0.1', 'an IPv4-compatible IPv6 address'],
    ['::8.8.8.8', 'an IPv4-compatible IPv6 address'],
    ['::a9fe:a9fe', 'an IPv4-compatible IPv6 address'],
    ['64:ff9b::7f00:1', 'a NAT64 address'],
    ['64:ff9b::808:808', 'a NAT64 address'],
    ['64:ff9b:1::a00:1', 'a NAT64 address'],
    ['2002:7f00:1::1', 'a 6to4 address'],
    ['2002:a9fe:a9fe::', 'a 6to4 address'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'a Teredo address'],
    ['::ffff:0:7f00:1', 'an SIIT address'],
  ])('refuses %s (%s)', (ip, description) => {
    expect(strict.isAllowed(ip)).toBe(false);
    expect(strict.refusalReason(ip)).toContain(description);
  });

  it('refuses IPv4-embedding forms even when the IPv4 range they carry is allow-listed', () => {
    const policy = new DestinationPolicy(['127.0.0.0/8']);
    expect(policy.isAllowed('127.0.0.1')).toBe(true);
    for (const ip of ['::127.0.0.1', '64:ff9b::7f00:1', '2002:7f00:1::1']) expect(policy.isAllowed(ip)).toBe(false);
  });

  it.each(['93.184.215.14', '8.8.8.8', '2606:4700::1111', '::ffff:8.8.8.8'])('allows the public address %s', (ip) => {
    expect(strict.refusalReason(ip)).toBeNull();
  });

  it('refuses what is not an IP address', () => {
    expect(strict.refusalReason('example.com')).toMatch(/not an IP address/);
  });

  it('allows exactly the operator allow-listed ranges, in both IPv4 notations', () => {
    const policy = new DestinationPolicy(['127.0.0.0/8', '10.20.0.0/16']);
    expect(policy.isAllowed('127.0.0.1')).toBe(true);
    expect(policy.isAllowed('127.255.0.9')).toBe(true);
    expect(policy.isAllowed('::ffff:127.0.0.1')).toBe(true);
    expect(policy.isAllowed('10.20.5.5')).toBe(true);
    expect(policy.isAllowed('10.21.0.1')).toBe(false);
    expect(policy.isAllowed('::1')).toBe(false);
    expect(policy.isAllowed('169.254.169.254')).toBe(false);
  });

  it('allow-lists IPv6 ranges', () => {
    const policy = new DestinationPolicy(['::1/128', 'fd00::/8']);
    expect(policy.isAllowed('::1')).toBe(true);
    expect(policy.isAllowed('fd00::5')).toBe(true);
    expect(policy.isAllowed('127.0.0.1')).toBe(false);
  });
});

describe('ipLiteralHost', () => {
  it.each([
    ['http://127.0.0.1:8080/x', '127.0.0.1'],
    ['http://2130706433/', '127.0.0.1'],
    ['http://0x7f000001/', '127.0.0.1'],
    ['http://0x7f.1/', '127.0.0.1'],
    ['http://017700000001/', '127.0.0.1'],
    ['http://[2001:db8::1]/', '2001:db8::1'],
    ['https://1.2.3.example.com/', null],
    ['https://localhost/', null],
    ['http://[::1]/', '::1'],
    ['http://[::ffff:7f00:1]/', '::ffff:7f00:1'],
    ['https://example.com/', null],
    ['https://1.2.3.4.nip.io/', null],
    ['not a url', null],
  ])('%s → %p', (url, expected) => {
    expect(ipLiteralHost(url)).toBe(expected);
  });
});

describe('localhostNameOf (RFC 6761)', () => {
  it.each([
    ['http://localhost/', 'localhost'],
    ['http://LocalHost:8080/hook', 'localhost'],
    ['http://localhost./', 'localhost'],
    ['https://api.localhost/', 'api.localhost'],
    ['https://a.b.LOCALHOST./x', 'a.b.localhost'],
    ['https://localhost.example.com/', null],
    ['https://notlocalhost/', null],
    ['http://127.0.0.1/', null],
    ['not a url', null],
  ])('%s → %p', (url, expected) => {
    expect(localhostNameOf(url)).toBe(expected);
  });
});

describe('isValidCidr', () => {
  it.each([
    ['127.0.0.0/8', true],
    ['::1/128', true],
    ['10.0.0.1', false],
    ['10.0.0.0/33', false],
    ['nonsense', false],
  ])('%s → %p', (cidr, valid) => {
    expect(isValidCidr(cidr)).toBe(valid);
  });
});
