/**
 * `createExpressServer(app)`: the `node:http` server of an Express app, used by Core and the
 * facilitator instead of `http.createServer(app)`.
 *
 * Why: for every request Express (`app.handle`) swaps the prototypes of Node's request and response
 * objects for its own (`Object.setPrototypeOf(req, app.request)`, the same for `res`). An object whose
 * prototype changes after it was built gets a new hidden class, and V8 then runs the property accesses
 * on it, in Node's HTTP code as in Express's, on slow paths. On the 2-core benchmark VM that swap cost
 * ≈ 90 µs of CPU per request, more than half of all that Express costs (docs/benchmarks.md, "Fifth
 * round"). Node lets a server choose how it builds requests and responses (the `IncomingMessage` and
 * `ServerResponse` options of `http.createServer`); here they are built with `app.request` and
 * `app.response` as their prototypes from the start, so Express's swap sets the prototype an object
 * already has, which changes nothing. Express, its routing, its request and response methods and every
 * answer are unchanged.
 *
 * The constructors call Node's own as functions on the new object (Node 20 defines `IncomingMessage`
 * and `ServerResponse` as functions, not classes). `Reflect.construct` with a custom `new.target` would
 * also work for classes, but V8 then gives each object a derived map that is slower still (measured:
 * worse than no change at all).
 */
import { createServer, IncomingMessage, type Server, ServerResponse } from "node:http";
import type { Express } from "express";

/** A constructor running `base` (Node's own) on an object whose prototype is `prototype`. */
function builtWithPrototype(base: object, prototype: object): unknown {
  const constructor = function (this: object, first: unknown, second: unknown): void {
    Reflect.apply(base as (...args: unknown[]) => void, this, [first, second]);
  };
  constructor.prototype = prototype;
  return constructor;
}

export function createExpressServer(app: Express): Server {
  return createServer(
    {
      IncomingMessage: builtWithPrototype(IncomingMessage, app.request) as typeof IncomingMessage,
      ServerResponse: builtWithPrototype(ServerResponse, app.response) as typeof ServerResponse,
    },
    app,
  );
}
