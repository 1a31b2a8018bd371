// The part of proper-lockfile 4 the CLI uses (the package ships no types; @types/proper-lockfile
// would be a dependency of every install for two functions).
declare module 'proper-lockfile' {
  export interface LockOptions {
    stale?: number;
    update?: number;
    retries?: number | { retries?: number; factor?: number; minTimeout?: number; maxTimeout?: number; randomize?: boolean };
    realpath?: boolean;
    lockfilePath?: string;
    onCompromised?: (error: Error) => void;
  }
  export function lock(file: string, options?: LockOptions): Promise<() => Promise<void>>;
  const lockfile: { lock: typeof lock };
  export default lockfile;
}
