import { connect, nanos } from '@nats-io/transport-node';
import { jetstreamManager, jetstream, AckPolicy, DeliverPolicy } from '@nats-io/jetstream';
const nc = await connect({ servers: 'nats://127.0.0.1:4222', maxReconnectAttempts: -1 });
const jsm = await jetstreamManager(nc);
const js = jetstream(nc);
const nc2 = await connect({ servers: 'nats://127.0.0.1:4222' }); const js2 = jetstream(nc2);
await jsm.streams.add({ name: 'EXP3', subjects: ['exp3.>'] });
try {
await jsm.consumers.add('EXP3', { durable_name: 'd', deliver_policy: DeliverPolicy.All, ack_policy: AckPolicy.Explicit, filter_subject: 'exp3.a' });
const c = await js.consumers.get('EXP3', 'd');
(async () => { for await (const s of nc.status()) console.log('conn status', s.type); })();
const t0 = Date.now();
const loop = (async () => {
  for (let i = 0; i < 3; i++) {
    const it = await c.fetch({ max_messages: 4, expires: 30000 });
    (async () => { for await (const s of it.status()) console.log(Date.now()-t0, 'fetch status', JSON.stringify(s)); })();
    try { for await (const m of it) { console.log(Date.now()-t0, 'got', m.string()); m.ack(); } } catch (e) { console.log('fetch err', e.message); }
    console.log(Date.now()-t0, 'fetch ended');
  }
})();
await new Promise(r => setTimeout(r, 300));
await js.publish('exp3.a', 'one');
await new Promise(r => setTimeout(r, 300));
await nc.reconnect();
console.log(Date.now()-t0, 'reconnect returned');
await new Promise(r => setTimeout(r, 3000));
await js2.publish('exp3.a', 'two'); console.log(Date.now()-t0, 'published two');
await new Promise(r => setTimeout(r, 8000));
} finally {
await jsm.streams.delete('EXP3');
await nc.close();
}
