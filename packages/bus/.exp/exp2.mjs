import { connect, headers, nanos } from '@nats-io/transport-node';
import { jetstreamManager, jetstream, AckPolicy, DeliverPolicy, RetentionPolicy, StorageType } from '@nats-io/jetstream';
const nc = await connect({ servers: 'nats://127.0.0.1:4222' });
const jsm = await jetstreamManager(nc);
const js = jetstream(nc);
await jsm.streams.add({ name: 'EXP2', subjects: ['exp2.>'], storage: StorageType.File, retention: RetentionPolicy.Limits, max_age: nanos(600000), duplicate_window: nanos(120000) });
try {
const ci = await jsm.consumers.add('EXP2', { durable_name: 'g__a_b_v1', deliver_policy: DeliverPolicy.All, ack_policy: AckPolicy.Explicit, filter_subject: 'exp2.a', ack_wait: nanos(30000), max_deliver: 20, max_ack_pending: 1000 });
console.log(ci.config);
try { await jsm.consumers.add('EXP2', { durable_name: 'g__a_b_v1', deliver_policy: DeliverPolicy.All, ack_policy: AckPolicy.Explicit, filter_subject: 'exp2.a', ack_wait: nanos(30000), max_deliver: 5, max_ack_pending: 1000 }); console.log('readd with diff ok', (await jsm.consumers.info('EXP2','g__a_b_v1')).config.max_deliver); } catch (e) { console.log('readd err', e.message); }
const up = await jsm.consumers.update('EXP2', 'g__a_b_v1', { max_deliver: 3, max_ack_pending: 500 });
console.log('updated', up.config.max_deliver, up.config.max_ack_pending);
const pa = await js.publish('exp2.a', 'one', { msgID: 'id1' });
const pa2 = await js.publish('exp2.a', 'one', { msgID: 'id1' });
console.log(pa, pa2);
const c = await js.consumers.get('EXP2', 'g__a_b_v1');
let t0 = Date.now();
for (let i = 0; i < 4; i++) {
  const it = await c.fetch({ max_messages: 1, expires: 5000 });
  for await (const m of it) {
    console.log(Date.now() - t0, m.info.deliveryCount, m.headers?.get('Nats-Msg-Id'), m.time, m.string());
    if (m.info.deliveryCount < 3) m.nak(300); else m.term();
  }
}
const it = await c.fetch({ max_messages: 1, expires: 1000 });
let n = 0; for await (const m of it) n++;
console.log('after term', n, Date.now()-t0);
const it2 = await c.fetch({ max_messages: 2, expires: 10000 });
setTimeout(() => it2.close(), 200);
t0 = Date.now();
for await (const m of it2) n++;
console.log('closed fetch after', Date.now()-t0);
await js.publish('exp2.a', 'two', { msgID: 'id2' });
const it3 = await c.fetch({ max_messages: 1, expires: 2000 });
for await (const m of it3) { console.log('got after close', m.string(), m.info.deliveryCount); m.ack(); }
} finally {
await jsm.streams.delete('EXP2');
await nc.drain();
}
