import type { RegistryCredentials } from '@runplane/contracts';
import type Docker from 'dockerode';
import type { LogLine } from '../compute-provider.js';

/** How often (at most) a pull's progress is told as the Pod's status. */
const PROGRESS_EVERY_MS = 1000;

interface ProgressEvent {
  id?: string;
  status?: string;
  progressDetail?: { current?: number; total?: number };
  error?: string;
  errorDetail?: { message?: string };
}

/** Raised when an image cannot be pulled (unknown image, refused credentials, registry down). */
export class ImagePullError extends Error {
  override readonly name = 'ImagePullError';
}

/**
 * Pulls `image` through the engine, telling its progress: each status change of a layer as a log
 * line, and a summary (`"Pulling <image>: 12.3 MB of 45.6 MB"`) at most once a second. Rejects with
 * the engine's reason when the pull fails (the stream's `error` event or a refused request).
 */
export async function pullImage(
  docker: Docker,
  image: string,
  credentials: RegistryCredentials | undefined,
  tell: { line: (line: LogLine) => void; progress: (summary: string) => void },
): Promise<void> {
  const auth = credentials
    ? {
        username: credentials.username,
        password: credentials.password,
        serveraddress: registryOf(image),
      }
    : undefined;
  let stream: NodeJS.ReadableStream;
  try {
    stream = (await docker.pull(image, auth ? { authconfig: auth } : {})) as NodeJS.ReadableStream;
  } catch (err) {
    throw new ImagePullError(engineMessage(err));
  }
  const layers = new Map<string, { current: number; total: number }>();
  let lastProgress = 0;
  let failure: string | undefined;
  await new Promise<void>((resolve, reject) => {
    docker.modem.followProgress(
      stream,
      (err: Error | null) => (err ? reject(new ImagePullError(engineMessage(err))) : resolve()),
      (event: ProgressEvent) => {
        if (event.error) {
          failure = event.errorDetail?.message ?? event.error;
          return;
        }
        const detail = event.progressDetail;
        if (event.id && detail?.total) {
          layers.set(event.id, { current: detail.current ?? 0, total: detail.total });
        } else if (event.status) {
          tell.line({
            at: new Date(),
            stream: 'stdout',
            text: `[runplane] pull ${image}: ${event.id ? `${event.id}: ` : ''}${event.status.trim()}`,
          });
        }
        const now = Date.now();
        if (layers.size && now - lastProgress >= PROGRESS_EVERY_MS) {
          lastProgress = now;
          let current = 0;
          let total = 0;
          for (const l of layers.values()) {
            current += l.current;
            total += l.total;
          }
          tell.progress(`Pulling ${image}: ${mb(current)} of ${mb(total)}`);
        }
      },
    );
  });
  if (failure) throw new ImagePullError(failure);
}

/** The registry host of an image reference (`docker.io` for Docker Hub's short names). */
export function registryOf(image: string): string {
  const first = image.split('/')[0];
  const isHost = image.includes('/') && (/[.:]/.test(first) || first === 'localhost');
  return isHost ? first : 'docker.io';
}

/** The engine's own message (dockerode wraps it as `(HTTP code 404) ... - <message>`). */
export function engineMessage(err: unknown): string {
  const e = err as { json?: { message?: string }; message?: string; reason?: string };
  const text = e?.json?.message ?? e?.message ?? String(err);
  return text.replace(/^\(HTTP code \d+\)[^-]*- /, '').trim();
}

function mb(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}
