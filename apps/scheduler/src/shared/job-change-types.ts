/** The shapes `JobChanges` works with: what a change means, held long polls, the keys of its maps. */

/** What a change means besides "this job changed": who else must look again. */
export interface ChangeEffects {
  /**
   * The job's final state, as the statement that finished it returned it: handed to this
   * replica's waiters of the job, which then need not read it again.
   */
  final?: unknown;
  /** This many jobs became claimable (submitted, retried, requeued): wakes that many waiting job-takes. */
  queued?: number;
  /** Job-stop rows were written for the endpoint's workers: wakes its job-stop polls. */
  stops?: boolean;
  /** The change may call for more or fewer workers: the autoscaler listeners run. */
  scaling?: boolean;
}

/** A held long poll. */
export interface Waiter {
  /** Leaves its set of waiters (and its timer) without ending the poll: `handOff` resolves it later. */
  detach: () => void;
  /** Ends the poll with what the change carried (a final state, handed jobs), or nothing. */
  resolve: (value?: unknown) => void;
  /** `detach` and `resolve`. */
  wake: (value?: unknown) => void;
  /** job-take polls only: the worker asking. */
  workerId?: string;
}

/**
 * The oldest waiting job-take of an endpoint, taken out of the waiters by `handOff`: its caller
 * must either `give` it jobs (assigned to `workerId` in the database) or `decline`, which wakes it
 * to claim jobs itself.
 */
export interface HandOff<T> {
  workerId: string;
  give(jobs: T[]): void;
  decline(): void;
}

/** The long polls held on one endpoint, by what they wait for. */
export interface EndpointWaiters {
  /** job-take polls, oldest first: new work wakes as many of them as there are new jobs. */
  takes: Set<Waiter>;
  /** job-stop polls: woken when stops were written. */
  stops: Set<Waiter>;
  /** await / stream polls of one job. */
  jobs: Map<string, Set<Waiter>>;
}

/** A key of `lastChange`: the endpoint as a whole, its queued work, its stops, or one job. */
export const endpointKey = (endpointId: string) => `e\u0000${endpointId}`;
export const workKey = (endpointId: string) => `w\u0000${endpointId}`;
export const stopsKey = (endpointId: string) => `s\u0000${endpointId}`;
export const jobKey = (jobId: string) => `j\u0000${jobId}`;
/** A key of `idleClaims`. */
export const workerKey = (endpointId: string, workerId: string) => `${endpointId}\u0000${workerId}`;
