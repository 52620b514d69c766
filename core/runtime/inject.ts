/**
 * The DI idiom in one place: classes registered through {@link registerClass} declare one token
 * per constructor parameter with `@inject`, and we record them so a guard test can check that
 * every registered class has as many tokens as constructor parameters (a missing `@inject`
 * silently yields `undefined` when no decorator metadata is emitted).
 */
import { Lifecycle, type DependencyContainer, type InjectionToken } from "tsyringe";
import type { Token } from "../tokens.js";

type Ctor<T> = new (...args: any[]) => T;

const registered = new Set<Ctor<unknown>>();

export function registerClass<T>(container: DependencyContainer, tok: Token<T>, cls: Ctor<T>): void {
  registered.add(cls);
  container.register(tok as InjectionToken<T>, { useClass: cls }, { lifecycle: Lifecycle.ContainerScoped });
}

export function registerValue<T>(container: DependencyContainer, tok: Token<T>, value: T): void {
  container.register(tok as InjectionToken<T>, { useValue: value });
}

export function registeredClasses(): ReadonlySet<Ctor<unknown>> {
  return registered;
}
