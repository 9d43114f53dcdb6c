import dns from 'node:dns';
import net from 'node:net';
import tls from 'node:tls';
import { DestinationPolicy } from '@herald/core';
import { buildConnector } from 'undici';

export const DESTINATION_BLOCKED = 'E_HERALD_DESTINATION_BLOCKED';

function blocked(message: string): Error {
  return Object.assign(new Error(message), { code: DESTINATION_BLOCKED });
}

/**
 * An undici connector that refuses internal destinations at connect time (PRODUCT.md §5.4),
 * whatever the URL looked like when it was saved (DNS answers change; that is DNS rebinding):
 * - an IP-literal host is judged before dialling (Node never calls `lookup` for literals);
 * - a name is resolved with every address it has, and refused if any of them is internal;
 * - the socket's peer address is judged again once connected.
 * request-filtering-agent and ssrf-req-filter are http.Agents and cannot plug into undici, so
 * this is written here, on ipaddr.js through DestinationPolicy.
 */
export function createSafeConnector(policy: DestinationPolicy, connectTimeoutMs: number): buildConnector.connector {
  const lookup = (
    hostname: string,
    options: dns.LookupOptions,
    callback: (error: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void,
  ) => {
    dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      for (const { address } of addresses) {
        const reason = policy.refusalReason(address);
        if (reason) return callback(blocked(`${hostname} resolves to ${reason}`), '', 0);
      }
      if (options.all) return callback(null, addresses);
      return callback(null, addresses[0].address, addresses[0].family);
    });
  };
  const connect = buildConnector({ timeout: connectTimeoutMs, lookup } as buildConnector.BuildOptions);

  return (options, callback) => {
    const host = options.hostname.replace(/^\[|\]$/g, '');
    if (net.isIP(host)) {
      const reason = policy.refusalReason(host);
      if (reason) return callback(blocked(`${host} is ${reason.replace(/^\S+ is /, '')}`), null);
    }
    connect(options, (error, socket) => {
      if (error || !socket) return callback(error ?? new Error('no socket'), null);
      const peer = socket.remoteAddress;
      const reason = peer ? policy.refusalReason(peer) : null;
      if (reason) {
        socket.destroy();
        return callback(blocked(`connected to ${reason}`), null);
      }
      callback(null, socket);
    });
  };
}

/** A proxy's answer to CONNECT larger than this is not one. */
const MAX_PROXY_ANSWER_BYTES = 16 * 1024;

/**
 * The same refusals, with every connection tunnelled through an HTTP CONNECT proxy
 * (HERALD_EGRESS_PROXY, PRODUCT.md §17). Herald resolves the destination and checks every
 * address itself, then asks the proxy to connect to the checked address — never to the name,
 * which the proxy would resolve again (a rebinding window) — so the proxy can never be used to
 * reach an address the policy refuses. The Host header and, for https, the TLS server name keep
 * the URL's name. The proxy itself is the operator's, and is not judged by the policy. Written by
 * hand for the reason above (undici's ProxyAgent asks the proxy for the name).
 */
export function createProxiedConnector(policy: DestinationPolicy, connectTimeoutMs: number, proxyUrl: string): buildConnector.connector {
  const proxy = new URL(proxyUrl);
  const proxyAuthorization =
    proxy.username === ''
      ? null
      : `Basic ${Buffer.from(`${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`).toString('base64')}`;
  return (options, callback) => {
    const host = options.hostname.replace(/^\[|\]$/g, '');
    const port = Number(options.port) || (options.protocol === 'https:' ? 443 : 80);
    let settled = false;
    const finish = (error: Error | null, socket: net.Socket | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error) {
        socket?.destroy();
        return callback(error, null);
      }
      callback(null, socket!);
    };
    const timer = setTimeout(
      () => finish(Object.assign(new Error('connect timeout (egress proxy)'), { code: 'UND_ERR_CONNECT_TIMEOUT' }), null),
      connectTimeoutMs,
    );
    checkedAddress(policy, host).then(
      (address) => {
        const authority = address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;
        const tunnel = net.connect({ host: proxy.hostname.replace(/^\[|\]$/g, ''), port: Number(proxy.port) || 80 });
        tunnel.once('error', (error) => finish(error, tunnel));
        tunnel.once('connect', () => {
          tunnel.write(
            `CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n` +
              (proxyAuthorization ? `Proxy-Authorization: ${proxyAuthorization}\r\n` : '') +
              '\r\n',
          );
        });
        let answer = Buffer.alloc(0);
        const onData = (chunk: Buffer) => {
          answer = Buffer.concat([answer, chunk]);
          const end = answer.indexOf('\r\n\r\n');
          if (end < 0) {
            if (answer.length > MAX_PROXY_ANSWER_BYTES) finish(new Error('the egress proxy answered CONNECT with too much'), tunnel);
            return;
          }
          tunnel.off('data', onData);
          tunnel.pause();
          const status = /^HTTP\/1\.[01] (\d{3})/.exec(answer.subarray(0, end).toString('latin1'))?.[1];
          if (status !== '200') {
            return finish(
              Object.assign(new Error(`the egress proxy refused CONNECT ${authority} (${status ?? 'no status'})`), {
                code: 'ECONNREFUSED',
              }),
              tunnel,
            );
          }
          const rest = answer.subarray(end + 4);
          if (rest.length > 0) tunnel.unshift(rest);
          tunnel.removeAllListeners('error');
          if (options.protocol !== 'https:') return finish(null, tunnel);
          const servername = options.servername || (net.isIP(host) ? undefined : host);
          const secure = tls.connect({ socket: tunnel, servername, ALPNProtocols: ['http/1.1'] });
          secure.once('secureConnect', () => finish(null, secure));
          secure.once('error', (error) => finish(error, secure));
        };
        tunnel.on('data', onData);
      },
      (error: Error) => finish(error, null),
    );
  };
}

/** The address to connect to: an IP literal as it is, a name resolved; refused when the policy refuses any of its addresses. */
async function checkedAddress(policy: DestinationPolicy, host: string): Promise<string> {
  if (net.isIP(host)) {
    const reason = policy.refusalReason(host);
    if (reason) throw blocked(`${host} is ${reason.replace(/^\S+ is /, '')}`);
    return host;
  }
  const addresses = await dns.promises.lookup(host, { all: true });
  for (const { address } of addresses) {
    const reason = policy.refusalReason(address);
    if (reason) throw blocked(`${host} resolves to ${reason}`);
  }
  // IPv4 first when a name has both: what most proxies and networks reach.
  return (addresses.find((a) => a.family === 4) ?? addresses[0]).address;
}
