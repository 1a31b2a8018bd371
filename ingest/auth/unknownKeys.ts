/**
 * Connection keys recently found to name no connection (issue 25, item 4), so that a collector
 * repeating one costs PostgreSQL one read per TTL. Bounded: past `maxEntries` the least recently
 * asked key is dropped, so random keys cannot grow memory. The TTL can stay short because a key
 * is generated with its connection (management/connections/connectionStore.ts): no collector
 * holds a key before its row exists, so an entry only delays a key that was guessed.
 */
export class UnknownKeys {
  /** Key → when it stops being known as unknown; Map order is least recently asked first. */
  private readonly until = new Map<string, number>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries: number,
  ) {}

  has(connectionKey: string, nowMs: number): boolean {
    const until = this.until.get(connectionKey);
    if (until === undefined) return false;
    this.until.delete(connectionKey);
    if (until <= nowMs) return false;
    this.until.set(connectionKey, until);
    return true;
  }

  add(connectionKey: string, nowMs: number): void {
    this.until.delete(connectionKey);
    if (this.until.size >= this.maxEntries) this.until.delete(this.until.keys().next().value!);
    this.until.set(connectionKey, nowMs + this.ttlMs);
  }

  delete(connectionKey: string): void {
    this.until.delete(connectionKey);
  }

  get size(): number {
    return this.until.size;
  }
}
