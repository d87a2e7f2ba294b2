// cluster-key-slot (ioredis's own slot hash) ships without types.
declare module 'cluster-key-slot' {
  /** The Redis Cluster slot (0–16383) of a key, honouring `{hash tags}`. */
  const generate: (key: string) => number;
  export default generate;
}
