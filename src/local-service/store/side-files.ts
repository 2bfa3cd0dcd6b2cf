import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ModelInput } from '../../contract';
import { writeFileDurable } from './durable-files';

const SAFE_NAME = /^[A-Za-z0-9_-]+$/;

function checkedName(name: string): string {
  if (!SAFE_NAME.test(name)) throw new Error(`unsafe side-file name ${JSON.stringify(name)}`);
  return name;
}

/**
 * Job inputs kept beside the journal: `<root>/<request_id>/input.json`, plus the media file a
 * per-second model was priced from (fetched once, rendered from the same bytes). Written durably
 * before the job's journal record; removed once the job is terminal.
 */
export class InputStore {
  constructor(readonly root: string) {
    fs.mkdirSync(root, { recursive: true });
  }

  /** Directory of one job's inputs (created on demand by writers). */
  dirOf(id: string): string {
    return path.join(this.root, checkedName(id));
  }

  write(id: string, input: ModelInput): void {
    writeFileDurable(path.join(this.dirOf(id), 'input.json'), JSON.stringify(input));
  }

  async read(id: string): Promise<ModelInput> {
    return JSON.parse(await fs.promises.readFile(path.join(this.dirOf(id), 'input.json'), 'utf8')) as ModelInput;
  }

  async remove(id: string): Promise<void> {
    await fs.promises.rm(this.dirOf(id), { recursive: true, force: true });
  }

  /** Removes the inputs of every job `keep` does not name (terminal, or never created: a crash before its record). */
  sweep(keep: (id: string) => boolean): void {
    for (const name of fs.readdirSync(this.root))
      if (!keep(name)) fs.rmSync(path.join(this.root, name), { recursive: true, force: true });
  }
}

/** Webhook event bodies, `<root>/<event_id>.json`: the exact bytes every attempt sends. */
export class EventBodyStore {
  constructor(readonly root: string) {
    fs.mkdirSync(root, { recursive: true });
  }

  private fileOf(eventId: string): string {
    return path.join(this.root, `${checkedName(eventId)}.json`);
  }

  write(eventId: string, body: string): void {
    writeFileDurable(this.fileOf(eventId), body);
  }

  async read(eventId: string): Promise<string> {
    return fs.promises.readFile(this.fileOf(eventId), 'utf8');
  }

  async remove(eventId: string): Promise<void> {
    await fs.promises.rm(this.fileOf(eventId), { force: true });
  }

  /** Removes every body no pending delivery needs. */
  sweep(keep: (eventId: string) => boolean): void {
    for (const name of fs.readdirSync(this.root)) {
      const eventId = name.replace(/\.json$/, '');
      if (!name.endsWith('.json') || !keep(eventId)) fs.rmSync(path.join(this.root, name), { force: true });
    }
  }
}
