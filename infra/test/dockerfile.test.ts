import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { DockerfileParser, type Copy, type Instruction } from 'dockerfile-ast';
import { INFRA_DIR, renderKustomization } from '../src/index.js';

// The image cannot be built on machines without a Docker engine (this one): these checks hold the
// Dockerfile to its promises by reading it. docs/deploy.md says how to build and smoke-test it.
const ROOT = path.resolve(INFRA_DIR, '..');
const dockerfile = DockerfileParser.parse(fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8'));
const instructions = dockerfile.getInstructions();
const stageOf = (i: Instruction) =>
  dockerfile
    .getFROMs()
    .filter((f) => f.getRange().start.line <= i.getRange().start.line)
    .at(-1)
    ?.getBuildStage();
const inStage = (stage: string) =>
  instructions.filter((i) => i.getKeyword() !== 'FROM' && stageOf(i) === stage);
const args = Object.fromEntries(
  dockerfile.getARGs().map((a) => [a.getProperty()!.getName(), a.getProperty()!.getValue()]),
);
const finalStage = dockerfile.getFROMs().at(-1)!.getBuildStage()!;
const rootPackage = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  version: string;
  workspaces: string[];
};

describe('Dockerfile', () => {
  it('builds FROM a Node 24 LTS image pinned to an exact version', () => {
    for (const from of dockerfile.getFROMs()) {
      const image = from
        .getImageName()!
        .replace(/^\$\{(\w+)\}$/, (_, name: string) => args[name] ?? '');
      expect(image).toMatch(/^node:24\.\d+\.\d+-[a-z]+(-slim)?(@sha256:[0-9a-f]{64})?$/);
    }
  });

  it('runs as an unprivileged numeric user, the same one the Kubernetes manifests require', () => {
    const users = inStage(finalStage)
      .filter((i) => i.getKeyword() === 'USER')
      .map((i) => i.getArgumentsContent()!);
    expect(users).toEqual(['10001:10001']);
    for (const o of renderKustomization(path.join(INFRA_DIR, 'k8s', 'base')).filter(
      (x) => x.kind === 'Deployment',
    )) {
      expect((o.spec as any).template.spec.securityContext).toMatchObject({
        runAsUser: 10001,
        runAsGroup: 10001,
        runAsNonRoot: true,
      });
    }
  });

  it('starts the runplane CLI, so any service runs by argument', () => {
    const entry = inStage(finalStage).find((i) => i.getKeyword() === 'ENTRYPOINT')!;
    expect(JSON.parse(entry.getArgumentsContent()!)).toEqual([
      'node',
      '--max-semi-space-size=64',
      '/app/packages/cli/bin/runplane.js',
    ]);
    expect(fs.existsSync(path.join(ROOT, 'packages/cli/bin/runplane.js'))).toBe(true);
  });

  it('ships production dependencies only: the runtime stage copies the pruned tree and nothing else', () => {
    const copies = inStage(finalStage).filter(
      (i): i is Copy => i.getKeyword() === 'COPY',
    ) as Copy[];
    expect(copies.map((c) => [c.getFromFlag()?.getValue(), c.getArgumentsContent()])).toEqual([
      ['build', '/out /app'],
    ]);
    const runs = inStage('build')
      .filter((i) => i.getKeyword() === 'RUN')
      .map((i) => i.getArgumentsContent()!.replace(/\\\n/g, ' '));
    const pruning = runs.find((r) => r.includes('/out'))!;
    expect(pruning).toMatch(/cd \/out && npm ci --omit=dev --omit=optional --ignore-scripts/);
    // Every workspace of the root package.json is carried over (npm ci needs them all).
    for (const ws of rootPackage.workspaces) expect(pruning).toContain(` ${ws}`);
    // Nothing in the runtime stage installs packages.
    expect(
      inStage(finalStage)
        .filter((i) => i.getKeyword() === 'RUN')
        .map((i) => i.getArgumentsContent())
        .join(' '),
    ).not.toMatch(/npm (ci|install)|apt-get install/);
  });

  it('never lets an install script download anything (no Prisma engine is needed)', () => {
    const installs = instructions
      .filter((i) => i.getKeyword() === 'RUN')
      .flatMap((i) => i.getArgumentsContent()!.match(/npm (ci|install)[^&;]*/g) ?? []);
    expect(installs.length).toBeGreaterThanOrEqual(2);
    for (const install of installs) expect(install).toContain('--ignore-scripts');
  });

  it('keeps local state and secrets out of the build context', () => {
    const ignored = fs
      .readFileSync(path.join(ROOT, '.dockerignore'), 'utf8')
      .split('\n')
      .map((l) => l.trim());
    expect(ignored).toEqual(
      expect.arrayContaining(['.git', '**/node_modules', '**/dist', '.runplane', '.env']),
    );
  });

  it('is the image the manifests deploy, tagged with the release version', () => {
    const images = new Set(
      renderKustomization(path.join(INFRA_DIR, 'k8s', 'overlays', 'prod')).flatMap(
        (o) => JSON.stringify(o).match(/"image":"runplane\/runplane[^"]*"/g) ?? [],
      ),
    );
    expect([...images]).toEqual([`"image":"runplane/runplane:${rootPackage.version}"`]);
  });
});
