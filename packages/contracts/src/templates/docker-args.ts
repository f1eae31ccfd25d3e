import { join, split } from 'shlex';
import { RunplaneError } from '../errors/runplane-error.js';

/**
 * `dockerArgs`: the start command (`dockerStartCmd`) as one shell-quoted string, the way RunPod's
 * GraphQL API and runpodctl's `POST /v1/pods` carry it. Splitting follows POSIX shell quoting, so
 * `python -c "print(1)"` is three arguments; joining quotes each argument so that it splits back
 * into the same list.
 */
export function splitDockerArgs(dockerArgs: string, path = 'dockerArgs'): string[] {
  try {
    return split(dockerArgs);
  } catch (err) {
    const message = `${path} cannot be split into arguments: ${(err as Error).message}`;
    throw RunplaneError.badRequest(message, [{ path, message }]);
  }
}

export function joinDockerArgs(argv: readonly string[]): string {
  return join([...argv]);
}
