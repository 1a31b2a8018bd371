/**
 * Where Redis is: one server (`redis://[user:pass@]host:port[/db]`) or a Redis Cluster
 * (`redis+cluster://[user:pass@]host:port[,host:port...]`, the seed nodes; the client learns the
 * rest from CLUSTER SLOTS). Parsed without ioredis so that shared/config.ts can validate it.
 */
export type RedisTarget = { kind: 'single'; url: string } | { kind: 'cluster'; nodes: RedisNode[]; username?: string; password?: string };

export interface RedisNode {
  host: string;
  port: number;
}

export const REDIS_CLUSTER_SCHEME = 'redis+cluster://';

export class RedisTargetError extends Error {}

/** `host:port[,host:port...]` (REDIS_CLUSTER_NODES, or the part of a cluster URL after the credentials). */
export function parseClusterNodes(list: string): RedisNode[] {
  const nodes = list
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
    .map((entry) => {
      const match = /^(\[[0-9a-fA-F:.]+\]|[^\s:/[\]]+):(\d{1,5})$/.exec(entry);
      const port = match ? Number(match[2]) : 0;
      if (!match || port < 1 || port > 65535) throw new RedisTargetError(`"${entry}" is not host:port`);
      return { host: match[1].replace(/^\[(.*)\]$/, '$1'), port };
    });
  if (nodes.length === 0) throw new RedisTargetError('no host:port given');
  return nodes;
}

export function parseRedisTarget(url: string): RedisTarget {
  if (!url.startsWith(REDIS_CLUSTER_SCHEME)) return { kind: 'single', url };
  const rest = url.slice(REDIS_CLUSTER_SCHEME.length).replace(/\/$/, '');
  const at = rest.lastIndexOf('@');
  const hosts = at === -1 ? rest : rest.slice(at + 1);
  // A cluster has only database 0: a `/n` would silently mean something else than on one server.
  if (hosts.includes('/') || hosts.includes('?')) throw new RedisTargetError('a Redis Cluster URL takes no database number or options');
  const target: RedisTarget = { kind: 'cluster', nodes: parseClusterNodes(hosts) };
  if (at !== -1) {
    const credentials = rest.slice(0, at);
    const colon = credentials.indexOf(':');
    const username = decodeURIComponent(colon === -1 ? credentials : credentials.slice(0, colon));
    if (username !== '') target.username = username;
    if (colon !== -1) target.password = decodeURIComponent(credentials.slice(colon + 1));
  }
  return target;
}

/** The cluster URL of a REDIS_CLUSTER_NODES list. */
export const clusterUrlOf = (nodes: RedisNode[]): string =>
  REDIS_CLUSTER_SCHEME + nodes.map((node) => `${node.host.includes(':') ? `[${node.host}]` : node.host}:${node.port}`).join(',');
