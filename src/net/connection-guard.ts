import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { defaultConnectionCap, openFilesLimit } from './open-files';

/**
 * Bounded work per connection on an HTTP listener (the bridge's, the local service's): how long a
 * request may take to arrive, and how many connections may be open at once.
 */
export interface ConnectionLimits {
  /** A request's headers must arrive within this from its first byte (node:http `headersTimeout`). */
  headersTimeoutMs: number;
  /** A request's headers and body must arrive within this (node:http `requestTimeout`; 408, then closed). */
  requestTimeoutMs: number;
  /** A connection that sends nothing for this long before or while a request arrives is closed. */
  idleTimeoutMs: number;
  /** Open connections at most; default from the open-files limit (defaultConnectionCap). */
  maxConnections?: number;
  /** Open connections from one client address at most; default three quarters of `maxConnections`. */
  maxConnectionsPerAddress?: number;
}

/** Limits with both caps decided. */
export type ResolvedConnectionLimits = Required<ConnectionLimits>;

/** Why the guard closed a connection. */
export type ConnectionCloseReason = 'cap' | 'address_cap' | 'refused' | 'idle';

/** How often node:http looks for requests over their time limits (its default is 30 s). */
export const CONNECTION_CHECK_INTERVAL_MS = 1_000;

/** Fills in the caps left to their defaults; checks that the per-address cap fits under the total. */
export function resolveConnectionLimits(limits: ConnectionLimits): ResolvedConnectionLimits {
  const maxConnections = limits.maxConnections ?? defaultConnectionCap(openFilesLimit());
  const perAddress = limits.maxConnectionsPerAddress ?? Math.max(1, Math.floor(maxConnections * 0.75));
  return {
    ...limits,
    headersTimeoutMs: Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs),
    maxConnections,
    maxConnectionsPerAddress: Math.min(perAddress, maxConnections),
  };
}

/**
 * The Fastify server options that carry the time limits to node:http: `requestTimeout`, the idle
 * `connectionTimeout`, and `headersTimeout` with a checking interval short enough that a request
 * over its limit is cut within a second of it.
 */
export function listenerTimeouts(limits: ResolvedConnectionLimits): {
  requestTimeout: number;
  connectionTimeout: number;
  http: { headersTimeout: number; requestTimeout: number; connectionsCheckingInterval: number };
} {
  return {
    requestTimeout: limits.requestTimeoutMs,
    connectionTimeout: limits.idleTimeoutMs,
    http: {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      connectionsCheckingInterval: CONNECTION_CHECK_INTERVAL_MS,
    },
  };
}

interface Tracked {
  socket: Socket;
  address: string;
  /** The request being received or answered; undefined between requests. */
  request?: IncomingMessage;
  /** When the connection's current state began (opened, request started, last response sent). */
  since: number;
}

/** A connection that is not working for a complete request: none yet, idle, or its body still arriving. */
function sheddable(entry: Tracked): boolean {
  return entry.request === undefined || !entry.request.complete;
}

/** A guarded listener's view of its connections. */
export interface ConnectionGuard {
  /** Connections open now. */
  open(): number;
  /** The caps in force. */
  readonly limits: ResolvedConnectionLimits;
}

/**
 * Caps the open connections of `server` (an HTTP/1 node:http server, before it listens). A new
 * connection over the total cap, or over its address's, makes room by closing the oldest connection
 * in that scope that is not working on a complete request (never opened one, idle between requests,
 * or its body still arriving); when every one there is answering a complete request, the new one is
 * closed instead. A connection that stays silent for `idleTimeoutMs` before or during a request is
 * closed; one answering a complete request is left to answer. So a client that holds connections
 * open without finishing a request cannot keep a complete, signed request from being answered.
 */
export function guardConnections(
  server: Server,
  limits: ResolvedConnectionLimits,
  onClose: (reason: ConnectionCloseReason) => void = () => undefined,
): ConnectionGuard {
  const all = new Map<Socket, Tracked>();
  const byAddress = new Map<string, Set<Tracked>>();

  const forget = (entry: Tracked) => {
    all.delete(entry.socket);
    const peers = byAddress.get(entry.address);
    peers?.delete(entry);
    if (peers?.size === 0) byAddress.delete(entry.address);
  };
  // Closing forgets at once: a socket's 'close' comes later, and the next count must not see it.
  const close = (entry: Tracked, reason: ConnectionCloseReason) => {
    forget(entry);
    entry.socket.destroy();
    onClose(reason);
  };
  const oldestSheddable = (scope: Iterable<Tracked>, except: Tracked): Tracked | undefined => {
    let oldest: Tracked | undefined;
    for (const entry of scope)
      if (entry !== except && sheddable(entry) && (oldest === undefined || entry.since < oldest.since)) oldest = entry;
    return oldest;
  };
  // Makes room in one scope (the whole listener, or one address); false when nothing there may be closed.
  const makeRoom = (
    scope: Set<Tracked> | Map<Socket, Tracked>,
    cap: number,
    entry: Tracked,
    reason: 'cap' | 'address_cap',
  ) => {
    if (scope.size <= cap) return true;
    const victim = oldestSheddable(scope.values(), entry);
    if (victim === undefined) return false;
    close(victim, reason);
    return true;
  };

  server.on('connection', (socket: Socket) => {
    const entry: Tracked = { socket, address: socket.remoteAddress ?? '', since: Date.now() };
    const peers = byAddress.get(entry.address) ?? new Set<Tracked>();
    byAddress.set(entry.address, peers);
    all.set(socket, entry);
    peers.add(entry);
    socket.once('close', () => forget(entry));
    const admitted =
      makeRoom(all, limits.maxConnections, entry, 'cap') &&
      makeRoom(peers, limits.maxConnectionsPerAddress, entry, 'address_cap');
    if (!admitted) close(entry, 'refused');
  });

  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const socket = request.socket;
    const entry = all.get(socket);
    if (!entry) return;
    entry.request = request;
    entry.since = Date.now();
    response.once('close', () => {
      if (entry.request !== request) return;
      entry.request = undefined;
      entry.since = Date.now();
      // Answered before its body arrived (a 401 before the body is read): node keeps reading the rest
      // under its keep-alive timeout; the rest must come as promptly as any request's bytes.
      if (!request.complete && !socket.destroyed) socket.setTimeout(limits.idleTimeoutMs);
    });
  });

  // Node destroys a silent socket only when nobody listens for 'timeout'; listening, the guard keeps
  // the connections that are answering a complete request (the handler is what is slow, not the client).
  server.on('timeout', (socket: Socket) => {
    const entry = all.get(socket);
    const request = entry?.request;
    if (request && (request.complete || request.readableLength > 0)) return;
    if (entry) close(entry, 'idle');
    else socket.destroy();
  });

  return { open: () => all.size, limits };
}
