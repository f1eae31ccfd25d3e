import { Global, Module, type DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { AuthModule, AuthThrottle } from '@runplane/auth';
import { Bus, BusErrorPassthroughFilter, BusTransport } from '@runplane/bus';
import { DatabaseTargets } from '@runplane/database';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { loadConfig, RunplaneConfig } from '../config/runplane-config.js';
import { HealthController } from '../health/health.controller.js';
import { ReadinessService } from '../health/readiness.js';
import { HttpErrorFilter } from '../http/http-error.filter.js';
import { createValidationPipe } from '../http/validation.js';
import { createLogger, PinoNestLogger } from '../logging/logger.js';
import { shutdownTelemetry, tracingInterceptors } from '../telemetry/index.js';
import { configureFastify, createHttpAdapter } from './http-adapter.js';
import { createRuntime } from './runtime.js';
import {
  installHttpMetrics,
  MeteredBus,
  MetricsController,
  RunplaneMetrics,
} from '../metrics/index.js';
import { LOGGER, type ServiceDescriptor } from './service-descriptor.js';
import { installApiDocs } from '../docs/api-docs.js';
import { installConsole } from '../console/console-site.js';

export interface StartOptions {
  services: ServiceDescriptor[];
  /** True when this process runs every service (standalone): embedded storage allowed. */
  allInOne: boolean;
  env?: NodeJS.ProcessEnv;
  logger?: Logger;
}

export interface RunningServer {
  app: NestFastifyApplication;
  url: string;
  port: number;
  logger: Logger;
  /** The process's bus (tests use it to call services directly). */
  bus: Bus;
  /** Every route the HTTP server registered (tests hold the OpenAPI document to it). */
  routes: readonly RegisteredRoute[];
  /** Graceful stop: not ready, stop taking work, finish in-flight, close bus and databases. */
  stop(): Promise<void>;
}

/** A route as Fastify registered it (`url` with `:params` and `*`). */
export interface RegisteredRoute {
  method: string;
  url: string;
}

/** The process-wide values every module may inject. */
interface RootValues {
  bus: Bus;
  metrics: RunplaneMetrics;
  databases: DatabaseTargets;
  config: RunplaneConfig;
  logger: Logger;
}

@Global()
@Module({})
class RunplaneRootModule {
  static forRoot(
    services: ServiceDescriptor[],
    { bus, metrics, databases, config, logger }: RootValues,
  ): DynamicModule {
    return {
      module: RunplaneRootModule,
      imports: [AuthModule, ...services.map((s) => s.module)],
      controllers: [HealthController, MetricsController],
      providers: [
        { provide: Bus, useValue: bus },
        { provide: RunplaneMetrics, useValue: metrics },
        { provide: DatabaseTargets, useValue: databases },
        { provide: RunplaneConfig, useValue: config },
        { provide: LOGGER, useValue: logger },
        {
          provide: AuthThrottle,
          useValue: new AuthThrottle({
            failuresPerWindow: config.RUNPLANE_AUTH_FAILURE_LIMIT,
            failureWindowSeconds: config.RUNPLANE_AUTH_FAILURE_WINDOW_S,
            managementPerWindow: config.RUNPLANE_MANAGEMENT_RATE_LIMIT,
          }),
        },
        ReadinessService,
      ],
      exports: [
        Bus,
        DatabaseTargets,
        RunplaneConfig,
        LOGGER,
        ReadinessService,
        RunplaneMetrics,
        AuthThrottle,
      ],
    };
  }
}

/** Starts the given services in this process: the same code path for standalone and cluster mode. */
export async function startRunplane(options: StartOptions): Promise<RunningServer> {
  const config = loadConfig(options.env ?? process.env);
  // Read once: the bootstrap key must not stay where a child process or /proc/<pid>/environ shows it.
  if (!options.env) delete process.env.RUNPLANE_API_KEY;
  const logger = options.logger ?? createLogger({ level: config.LOG_LEVEL });
  const names = options.services.map((s) => s.name);
  const started = Date.now();
  const runtime = await createRuntime(names, config, logger, options.allInOne);
  // One registry per process: in standalone mode every service reports into the same /metrics.
  const metrics = new RunplaneMetrics();
  const bus = new MeteredBus(runtime.bus, metrics);
  let app: NestFastifyApplication | undefined;
  try {
    app = await NestFactory.create<NestFastifyApplication>(
      RunplaneRootModule.forRoot(options.services, {
        bus,
        metrics,
        databases: runtime.databases,
        config,
        logger,
      }),
      createHttpAdapter({
        timeouts: {
          headersMs: config.RUNPLANE_HEADERS_TIMEOUT_MS,
          requestMs: config.RUNPLANE_REQUEST_TIMEOUT_MS,
          keepAliveMs: config.RUNPLANE_KEEP_ALIVE_TIMEOUT_MS,
        },
        trustProxy: config.RUNPLANE_TRUST_PROXY,
      }),
      {
        logger: new PinoNestLogger(logger.child({ component: 'nest' })),
        abortOnError: false,
        bodyParser: false,
      },
    );
    const fastify = app.getHttpAdapter().getInstance() as unknown as FastifyInstance;
    const routes: RegisteredRoute[] = [];
    fastify.addHook('onRoute', (route) => {
      for (const method of [route.method].flat()) routes.push({ method, url: route.url });
    });
    configureFastify(
      fastify,
      logger,
      config.RUNPLANE_LOG_REQUESTS,
      config.RUNPLANE_MAX_INFLIGHT_BODY_BYTES,
    );
    installHttpMetrics(fastify, metrics);
    installApiDocs(app, options.services);
    installConsole(
      fastify,
      {
        enabled: config.RUNPLANE_CONSOLE ?? options.allInOne,
        required: config.RUNPLANE_CONSOLE === true,
      },
      logger,
    );
    app.useGlobalFilters(new HttpErrorFilter(logger));
    app.useGlobalPipes(createValidationPipe({ rejectUnknownFields: true }));
    app.useGlobalInterceptors(...tracingInterceptors());

    // Deferred so it accepts its own globals; the app runs the module hooks once, so the
    // microservice must not run them again when it starts.
    const busServer = app.connectMicroservice(
      { strategy: new BusTransport(bus) },
      { inheritAppConfig: false, deferInitialization: true },
    );
    (busServer as unknown as { setIsInitHookCalled(v: boolean): void }).setIsInitHookCalled(true);
    busServer.useGlobalFilters(new BusErrorPassthroughFilter());
    busServer.useGlobalPipes(createValidationPipe());
    busServer.useGlobalInterceptors(...tracingInterceptors());
    await app.startAllMicroservices();

    const port = config.PORT ?? (options.allInOne ? 8080 : options.services[0].defaultPort);
    await app.listen(port, config.HOST);
    const address = app.getHttpServer().address();
    const actualPort = typeof address === 'object' && address ? address.port : port;
    const boundHost = typeof address === 'object' && address ? address.address : config.HOST;
    // `url` is where this process reaches itself; the log line names the address really bound.
    const url = `http://${hostForUrl(wildcard(boundHost) ? '127.0.0.1' : boundHost)}:${actualPort}`;
    logger.info(
      {
        services: names,
        host: boundHost,
        port: actualPort,
        ms: Date.now() - started,
        runtime: runtime.describe,
      },
      wildcard(boundHost)
        ? `runplane ready at ${url} (listening on all interfaces, ${hostForUrl(boundHost)}:${actualPort})`
        : `runplane ready at ${url}`,
    );

    const readiness = app.get(ReadinessService);
    let stopping: Promise<void> | undefined;
    const stop = () =>
      (stopping ??= (async () => {
        logger.info('shutting down: draining in-flight work');
        readiness.startDraining();
        let stage = 'closing HTTP, bus handlers and services';
        const force = setTimeout(() => {
          // What it still waits for, so that a hang can be told apart from a slow machine; said
          // on stderr too when logging is off (test servers), since the process ends here.
          const pending = pendingResources();
          const message = `graceful shutdown took longer than ${config.RUNPLANE_SHUTDOWN_TIMEOUT_MS} ms while ${stage}; exiting`;
          logger.error({ stage, pending }, message);
          if (!logger.isLevelEnabled('error'))
            process.stderr.write(`runplane: ${message} (pending: ${JSON.stringify(pending)})\n`);
          process.exit(1);
        }, config.RUNPLANE_SHUTDOWN_TIMEOUT_MS);
        force.unref();
        try {
          await app!.close(); // HTTP first, then bus handlers, then shutdown hooks (database clients)
          stage = 'closing the bus and the databases';
          await runtime.close();
          stage = 'flushing telemetry';
          await shutdownTelemetry(logger); // flushes buffered spans; a no-op when tracing is off
          logger.info('shutdown complete');
        } finally {
          clearTimeout(force);
        }
      })());
    return { app, url, port: actualPort, logger, bus, routes, stop };
  } catch (err) {
    await app?.close().catch(() => {});
    await runtime.close().catch(() => {});
    throw err;
  }
}

/** Pending resources by kind: sockets, timers, file requests… (`{ TCPSocketWrap: 3 }`). */
function pendingResources(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const kind of process.getActiveResourcesInfo()) counts[kind] = (counts[kind] ?? 0) + 1;
  return counts;
}

const wildcard = (host: string) => host === '0.0.0.0' || host === '::';
const hostForUrl = (host: string) => (host.includes(':') ? `[${host}]` : host);

/**
 * The application of `services` without running anything: Nest's preview mode resolves the module
 * graph but instantiates no provider, so no database, bus or port is opened. Enough to describe the
 * routes (buildOpenApiDocument) offline, e.g. for `runplane docs`. Close it after use.
 */
export async function createApiPreview(
  services: ServiceDescriptor[],
): Promise<NestFastifyApplication> {
  const absent = {} as never; // stands in for the process-wide values; preview mode never uses them
  return NestFactory.create<NestFastifyApplication>(
    RunplaneRootModule.forRoot(services, {
      bus: absent,
      metrics: absent,
      databases: absent,
      config: absent,
      logger: absent,
    }),
    createHttpAdapter(),
    { preview: true, logger: false, abortOnError: false, bodyParser: false },
  );
}
