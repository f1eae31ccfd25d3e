/**
 * The worker protocol environment of a managed worker. The
 * worker id is baked into every URL; `$ID` is left for runpod-python to replace with the job id.
 * The URLs end in `?gpu=...` because the SDK appends its own parameters with `&`.
 */
export function workerEnv(o: {
  baseUrl: string;
  endpointId: string;
  workerId: string;
  gpu: string;
  apiKey: string;
  pingIntervalMs: number;
}): Record<string, string> {
  const base = `${o.baseUrl.replace(/\/+$/, '')}/v2/${encodeURIComponent(o.endpointId)}`;
  const wid = encodeURIComponent(o.workerId);
  const query = `?gpu=${encodeURIComponent(o.gpu).replace(/%20/g, '+')}`;
  return {
    RUNPOD_WEBHOOK_GET_JOB: `${base}/job-take/${wid}${query}`,
    RUNPOD_WEBHOOK_POST_OUTPUT: `${base}/job-done/${wid}/$ID${query}`,
    RUNPOD_WEBHOOK_POST_STREAM: `${base}/job-stream/${wid}/$ID${query}`,
    RUNPOD_WEBHOOK_PING: `${base}/ping/${wid}${query}`,
    RUNPOD_POD_ID: o.workerId,
    RUNPOD_ENDPOINT_ID: o.endpointId,
    RUNPOD_AI_API_KEY: o.apiKey,
    RUNPOD_PING_INTERVAL: String(o.pingIntervalMs),
    // Fitness checks need internet access (8.8.8.8:53) and would kill workers on private networks.
    RUNPOD_SKIP_AUTO_SYSTEM_CHECKS: 'true',
  };
}

/** The GPU name in the worker URLs (informational, as on RunPod): the endpoint's first choice. */
export function gpuLabel(computeType: string, gpuTypeIds: string[]): string {
  if (computeType === 'CPU') return 'CPU';
  return gpuTypeIds[0] ?? 'ANY';
}
