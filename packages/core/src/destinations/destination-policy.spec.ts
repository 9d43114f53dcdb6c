import { DestinationPolicy, ipLiteralHost, isValidCidr } from './destination-policy';

describe('DestinationPolicy (PRODUCT.md §5.4)', () => {
  const strict = new DestinationPolicy();

  it.each([
    ['127.0.0.1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.0.1', 'private'],
    ['169.254.169.254', 'linkLocal'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.251', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'linkLocal'],
    ['fc00::1', 'uniqueLocal'],
    ['fd12:3456::1', 'uniqueLocal'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:169.254.169.254', 'linkLocal'],
  ])('refuses %s (%s)', (ip, range) => {
    expect(strict.isAllowed(ip)).toBe(false);
    expect(strict.refusalReason(ip)).toContain(range);
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
