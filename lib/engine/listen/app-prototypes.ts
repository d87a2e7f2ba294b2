import { IncomingMessage, ServerResponse, type ServerOptions } from 'node:http';

/** What {@link appPrototypes} gives: Node server options, and the call that names the app. */
export interface AppPrototypes {
  /** `IncomingMessage` and `ServerResponse` for `http.createServer` (or listenEngine's `serverOptions`). */
  serverOptions: Pick<ServerOptions, 'IncomingMessage' | 'ServerResponse'>;
  /** From now on, requests and responses are born with `app.request` and `app.response` as their prototypes. */
  bind(app: ExpressPrototypes): void;
}

/** The part of an Express app this needs: the prototypes it gives its requests and responses. */
export interface ExpressPrototypes {
  request: object;
  response: object;
}

/**
 * Request and response classes whose instances are born with an Express app's prototypes.
 *
 * Express gives every request and response the app's prototypes with `Object.setPrototypeOf`.
 * On an object that already exists V8 then makes the object a hidden class (shape) of its own:
 * no two requests share one, so every property read on them (by Express, by Node's streams and
 * HTTP code, by the app) misses its inline cache and takes the slow lookup. An object born with
 * the prototype already has it, and setPrototypeOf to the same prototype changes nothing. In the
 * demo's CPU profile (perf, refresh grants under load) the misses and shape copies were about a
 * quarter of the main thread's time (issue 35).
 *
 * `bind` may come after the server listens (the demo binds its app once the port, and so its
 * realm, is known); until then the instances are Node's own.
 *
 * @example
 * const prototypes = appPrototypes();
 * const listener = await listenEngine((req, res) => app(req, res), { port: 2375, insecure: true, serverOptions: prototypes.serverOptions });
 * prototypes.bind(app);
 */
export function appPrototypes(): AppPrototypes {
  // Function constructors on purpose: Node's own are, so `call` initializes the new object, and
  // `new` takes the prototype from the `prototype` property as it is at that moment.
  function AppRequest(this: IncomingMessage, ...args: ConstructorParameters<typeof IncomingMessage>): void {
    Reflect.apply(IncomingMessage, this, args);
  }
  function AppResponse(this: ServerResponse, ...args: ConstructorParameters<typeof ServerResponse>): void {
    Reflect.apply(ServerResponse, this, args);
  }
  AppRequest.prototype = IncomingMessage.prototype;
  AppResponse.prototype = ServerResponse.prototype;
  return {
    serverOptions: {
      IncomingMessage: AppRequest as unknown as typeof IncomingMessage,
      ServerResponse: AppResponse as unknown as typeof ServerResponse,
    },
    bind(app) {
      if (!(app.request instanceof IncomingMessage) || !(app.response instanceof ServerResponse)) {
        throw new TypeError('appPrototypes().bind needs an Express app: its request and response must inherit from Node\'s IncomingMessage and ServerResponse');
      }
      AppRequest.prototype = app.request;
      AppResponse.prototype = app.response;
    },
  };
}
