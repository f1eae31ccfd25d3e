// A server that answers `POST /v2/:id/run` with a made-up job and does nothing else: the floor
// of the HTTP stack under Runplane, for bench/stack-floor.mjs. Run as its own process so that its
// CPU time can be read from /proc; prints `listening <url>` when ready.
//
//   node bench/lib/floor-server.mjs fastify   bare Fastify: a route and its JSON body
//   node bench/lib/floor-server.mjs nest      NestJS on Fastify as Runplane's services use it: a
//                                             controller, a global guard reading the bearer token,
//                                             a global ValidationPipe (class-validator DTO)
//   node bench/lib/floor-server.mjs nest-nats the same, and the controller's answer comes from
//                                             another process over a NATS request (NATS_URL, or
//                                             127.0.0.1:4222): what a cluster hop adds at least
//   node bench/lib/floor-server.mjs responder that other process (both take FLOOR_SUBJECT)
import 'reflect-metadata';
import { Body, Controller, HttpCode, Module, Param, Post, ValidationPipe } from '@nestjs/common';
import { APP_GUARD, NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { IsObject, IsOptional, IsString } from 'class-validator';
import Fastify from 'fastify';
import { connect } from '@nats-io/transport-node';

let jobs = 0;
const accepted = () => ({ id: `job-${++jobs}`, status: 'IN_QUEUE' });

// Plain JavaScript has no decorator syntax here: the decorators are applied as functions.
class RunRequest {}
IsObject()(RunRequest.prototype, 'input');
IsOptional()(RunRequest.prototype, 'webhook');
IsString()(RunRequest.prototype, 'webhook');

const kind = process.argv[2];
const subject = `runplane.bench.floor.${process.env.FLOOR_SUBJECT ?? 'run'}`;
const nats =
  kind === 'nest-nats' || kind === 'responder'
    ? await connect({ servers: process.env.NATS_URL ?? '127.0.0.1:4222' })
    : null;

class RunController {
  async run(id, body) {
    if (!nats) return accepted();
    const reply = await nats.request(subject, JSON.stringify({ endpointId: id, ...body }), {
      timeout: 5000,
    });
    return reply.json();
  }
}
const run = Object.getOwnPropertyDescriptor(RunController.prototype, 'run');
Reflect.defineMetadata('design:paramtypes', [String, RunRequest], RunController.prototype, 'run');
Param('id')(RunController.prototype, 'run', 0);
Body()(RunController.prototype, 'run', 1);
HttpCode(200)(RunController.prototype, 'run', run);
Post(':id/run')(RunController.prototype, 'run', run);
Controller('v2')(RunController);

class BearerGuard {
  canActivate(context) {
    return /^Bearer \S+$/.test(context.switchToHttp().getRequest().headers.authorization ?? '');
  }
}

class FloorModule {}
Module({
  controllers: [RunController],
  providers: [{ provide: APP_GUARD, useClass: BearerGuard }],
})(FloorModule);

if (kind === 'nest' || kind === 'nest-nats') {
  const app = await NestFactory.create(FloorModule, new FastifyAdapter(), { logger: false });
  app.useGlobalPipes(
    new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true, transform: true }),
  );
  await app.listen(0, '127.0.0.1');
  console.log(`listening ${await app.getUrl()}`);
} else if (kind === 'fastify') {
  const app = Fastify();
  app.post('/v2/:id/run', async () => accepted());
  await app.listen({ port: 0, host: '127.0.0.1' });
  console.log(`listening http://127.0.0.1:${app.server.address().port}`);
} else if (kind === 'responder') {
  const sub = nats.subscribe(subject);
  console.log('listening nats');
  for await (const msg of sub) {
    msg.json();
    msg.respond(JSON.stringify(accepted()));
  }
} else {
  console.error('usage: node bench/lib/floor-server.mjs fastify|nest|nest-nats|responder');
  process.exit(2);
}
