/**
 * One step of a staged launch: `run` makes something (a directory, a process, a group) and
 * records it on the shared context; `undo`, when given, takes it away again.
 */
export interface Stage<C> {
  /** What the stage makes, for a reader and for {@link runStages}' `onUndoError`. */
  readonly name: string;
  run(ctx: C): Promise<void> | void;
  /** Takes back what `run` made; runs only when `run` completed and a later stage failed. */
  undo?(ctx: C): Promise<void> | void;
}

/**
 * Runs the stages in order. When one fails, the undos of the stages that completed run in
 * reverse (the failed stage cleans up after itself, or made nothing), then the stage's error is
 * rethrown as it was: an undo that fails in turn is passed to `onUndoError` (default: ignored)
 * and the unwinding goes on, so the caller always sees the first cause.
 *
 * @example
 * await runStages([{ name: 'dir', run: (c) => { c.dir = mkdtempSync(p); }, undo: (c) => rmSync(c.dir, { recursive: true }) }, launch], ctx);
 */
export async function runStages<C>(stages: readonly Stage<C>[], ctx: C, onUndoError: (stage: string, error: unknown) => void = () => undefined): Promise<void> {
  const done: Stage<C>[] = [];
  for (const stage of stages) {
    try {
      await stage.run(ctx);
    } catch (error) {
      for (const made of done.reverse()) {
        try {
          await made.undo?.(ctx);
        } catch (undoError) {
          onUndoError(made.name, undoError);
        }
      }
      throw error;
    }
    done.push(stage);
  }
}
