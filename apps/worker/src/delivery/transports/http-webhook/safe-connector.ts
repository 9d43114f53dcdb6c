import dns from 'node:dns';
import net from 'node:net';
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
