import { readFileSync, renameSync, writeFileSync } from 'node:fs';

/** The file's content: owners in the order they were first seen; owner `owners[i]` has range `i + 1`. */
interface OwnerRangesFile {
  owners: string[];
}

/**
 * Which container range of the server's subordinate range each owner (a container's
 * `dockgate.owner` label) runs on: range 0 for containers without an owner, as every container
 * had before owners got ranges of their own; then 1, 2… for owners in the order they are first
 * seen. The assignment is kept in `file` (under the state directory, written to a temporary file
 * and renamed over it), so a restarted server gives every owner the range its containers' root
 * filesystem copies and volumes were made for.
 */
export class OwnerRanges {
  private readonly owners: string[];

  constructor(private readonly file: string) {
    this.owners = OwnerRanges.read(file);
  }

  /** The owner's range index (0 without an owner), assigned and saved on first use. */
  indexOf(owner: string | undefined): number {
    if (owner === undefined) return 0;
    let at = this.owners.indexOf(owner);
    if (at < 0) {
      this.owners.push(owner);
      this.save();
      at = this.owners.length - 1;
    }
    return at + 1;
  }

  private save(): void {
    const temp = `${this.file}.tmp`;
    const content: OwnerRangesFile = { owners: this.owners };
    writeFileSync(temp, `${JSON.stringify(content)}\n`, { mode: 0o600 });
    renameSync(temp, this.file);
  }

  /** The saved owners; none when there is no file yet. A file that cannot be read as saved is an error: owners would silently move to other ranges. */
  private static read(file: string): string[] {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    const parsed = JSON.parse(text) as Partial<OwnerRangesFile> | null;
    const owners = parsed?.owners;
    if (!Array.isArray(owners) || !owners.every((o) => typeof o === 'string') || new Set(owners).size !== owners.length) {
      throw new Error(`${file} does not hold the owners' id ranges (an "owners" list of distinct names)`);
    }
    return [...owners];
  }
}
