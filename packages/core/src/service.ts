/**
 * A typed handle for a service: the name is the identity, the type parameter is what
 * `ctx.get` returns. Descriptors are frozen so nobody can rename one after the fact.
 */
export interface ServiceDescriptor<T> {
  readonly kind: 'service';
  readonly name: string;
  /** Phantom field carrying the service type; never set at run time. */
  readonly __type?: T;
}

/** The service type a descriptor stands for. */
export type ServiceOf<D> = D extends ServiceDescriptor<infer T> ? T : never;

const SERVICE_NAME = /^[a-z][a-z0-9-]*(\/[a-z0-9-]+)*$/;

/**
 * Declares a service. Two descriptors with the same name are the same service, so a plugin
 * compiled against another copy of a package still finds it.
 */
export function defineService<T>(name: string): ServiceDescriptor<T> {
  if (!SERVICE_NAME.test(name)) {
    throw new TypeError(
      `defineService: '${name}' is not a service name; use lower-case words joined by '-', optionally scoped with '/' (e.g. 'reach', 'sandbox/linux').`,
    );
  }
  return Object.freeze({ kind: 'service', name }) as ServiceDescriptor<T>;
}

/** Whether two descriptors name the same service. */
export function sameService(a: ServiceDescriptor<unknown>, b: ServiceDescriptor<unknown>): boolean {
  return a.name === b.name;
}
