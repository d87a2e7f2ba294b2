/** `dockgate/engine/scripted`: containers whose output is a script, for tests and demos. */
export { scriptedRuntime, type ScriptedRuntimeOptions, type ScriptedImage, type ScriptRun, type ScriptResult } from './scripted-runtime.js';
