// Jobs shared by several workers (decision 540: masking's table rewrites and its check, each over two connections to
// the copy): each worker takes the next job when it is free, so the jobs put first start first. The first failure
// stops the others taking more and is thrown once every worker has ended, so that none is still at work on a
// connection when the caller closes it; a failure that only follows from the first (a connection lost) is not the cause.
export async function drainSharedQueue<W, J>(
  workers: { worker: W; ready?: () => Promise<unknown> }[],
  jobs: readonly J[],
  each: (worker: W, job: J) => Promise<void>,
): Promise<void> {
  let next = 0;
  let first: { err: unknown } | undefined;
  await Promise.all(
    workers.map(async ({ worker, ready }) => {
      try {
        await ready?.();
        for (let job = jobs[next++]; job !== undefined; job = jobs[next++]) await each(worker, job);
      } catch (err) {
        next = jobs.length; // the others take no more
        first ??= { err };
      }
    }),
  );
  if (first) throw first.err;
}
