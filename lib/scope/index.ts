export type { ResourceScope, AccessEntry } from './types.js';
export { parseScope, parseScopeList } from './parse-scope.js';
export { formatScope, formatGrantedScope } from './format-scope.js';
export { mergeScopes } from './merge-scopes.js';
export { ScopeSyntaxError } from './scope-syntax-error.js';
