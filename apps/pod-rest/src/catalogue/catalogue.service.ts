import { Inject, Injectable, Optional } from '@nestjs/common';
import { LOGGER, type Logger } from '@runplane/platform';
import { readFileSync, statSync } from 'node:fs';
import { parse } from 'yaml';
import { PodRestSettings } from '../settings.js';
import { HostGpus } from '../gpus/host-gpus.js';
import { validateCatalogue, type Catalogue } from './catalogue.schema.js';
import { withHostGpus } from './host-gpu-types.js';

export class CatalogueError extends Error {
  override readonly name = 'CatalogueError';
}

/** Reads and validates a catalogue file; throws CatalogueError naming the file and every problem. */
export function loadCatalogueFile(file: string): Catalogue {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new CatalogueError(
      `cannot read the catalogue ${file}: ${(err as Error).message}. Set RUNPLANE_CATALOGUE_FILE (docs/compute.md).`,
    );
  }
  let raw: unknown;
  try {
    raw = parse(text, { prettyErrors: true, uniqueKeys: true });
  } catch (err) {
    throw new CatalogueError(`the catalogue ${file} is not valid YAML: ${(err as Error).message}`);
  }
  const result = validateCatalogue(raw);
  if (!result.catalogue) {
    throw new CatalogueError(
      `the catalogue ${file} is invalid:\n${result.problems.map((p) => `  - ${p}`).join('\n')}\nSee docs/compute.md.`,
    );
  }
  return result.catalogue;
}

/**
 * The catalogue in force. Loaded (and validated) when the service is built, so an invalid file
 * stops pod-rest at start with a clear message. While running, the file is checked for edits at
 * most every `RUNPLANE_CATALOGUE_RECHECK_MS`: a valid edit takes effect, an invalid one is logged
 * and the previous catalogue kept. The host's GPUs, when pod-rest hands them out, complete it
 * (`withHostGpus`).
 */
@Injectable()
export class CatalogueService {
  private current: Catalogue;
  private mtimeMs: number;
  private checkedAt = Date.now();

  constructor(
    private readonly settings: PodRestSettings,
    @Inject(LOGGER) private readonly logger: Logger,
    @Optional() private readonly hostGpus?: HostGpus,
  ) {
    this.current = this.load();
    this.mtimeMs = this.mtime();
  }

  get(): Catalogue {
    const now = Date.now();
    if (now - this.checkedAt >= this.settings.catalogueRecheckMs) {
      this.checkedAt = now;
      const mtime = this.mtime();
      if (mtime !== this.mtimeMs) {
        this.mtimeMs = mtime;
        try {
          this.current = this.load();
          this.logger.info({ file: this.settings.catalogueFile }, 'catalogue reloaded');
        } catch (err) {
          this.logger.error(
            { err: (err as Error).message },
            'the edited catalogue is invalid; keeping the previous one',
          );
        }
      }
    }
    return this.current;
  }

  private load(): Catalogue {
    return withHostGpus(loadCatalogueFile(this.settings.catalogueFile), this.hostGpus?.gpus ?? []);
  }

  private mtime(): number {
    try {
      return statSync(this.settings.catalogueFile).mtimeMs;
    } catch {
      return -1;
    }
  }
}
