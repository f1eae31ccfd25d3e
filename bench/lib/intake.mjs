// /run intake under a load generator (autocannon): `connections` keep-alive connections send
// `POST /v2/{endpoint}/run` back to back for `seconds`. The endpoints have no workers, so the server
// does nothing but accept jobs; afterwards the endpoints' queue depth must equal the accepted count (give or take the
// requests in flight when the load stops).
import autocannon from 'autocannon';
import { round } from './measure.mjs';

export async function runIntake(api, base, endpointIds, { apiKey, seconds, connections, input }) {
  const result = await autocannon({
    url: base,
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ input }),
    // Every connection cycles through the endpoints (one, or many to stay under per-endpoint limits).
    requests: endpointIds.map((id) => ({ path: `/v2/${id}/run` })),
    connections,
    duration: seconds,
    timeout: 30,
  });
  let queued = 0;
  for (const id of endpointIds)
    queued += (await api.request(base, 'GET', `/v2/${id}/health`)).jobs.inQueue;
  const accepted = result['2xx'];
  return {
    seconds: result.duration,
    connections,
    endpoints: endpointIds.length,
    accepted,
    acceptedPerSecond: round(accepted / result.duration),
    refused: result.non2xx,
    statusCodes: Object.fromEntries(
      Object.entries(result.statusCodeStats ?? {}).map(([code, s]) => [code, s.count]),
    ),
    errors: result.errors,
    timeouts: result.timeouts,
    latency: {
      p50: result.latency.p50,
      p90: result.latency.p90,
      p99: result.latency.p99,
      max: result.latency.max,
    },
    // Requests still in flight when the load generator stops are accepted but not counted by it.
    queuedAfterwards: queued,
    queueMatches: queued >= accepted && queued <= accepted + connections,
  };
}
