/*
 * Domain errors: what went wrong in the domain's terms, with the code and message the API shows.
 * Stores and domain functions throw these; the one error mapping (shared/http/error-mapping.ts)
 * gives each its HTTP status and envelope. Nothing here knows HTTP.
 */
export type FieldErrors = Record<string, string[]>;

/**
 * What a caught value says: an Error's message, anything else (a thrown string, a rejection's value) as text.
 * Never throws (it is called in catch blocks and logs): a value `String` cannot convert (an object with
 * no prototype, or whose `toString` throws or returns an object) is named by its type instead.
 */
export const errorMessage = (e: unknown): string => {
  try {
    if (e instanceof Error) return typeof e.message === 'string' ? e.message : String(e.message);
    return String(e);
  } catch {
    try {
      return Object.prototype.toString.call(e);
    } catch {
      return typeof e;
    }
  }
};

export class DomainError extends Error {
  constructor(
    /** The machine-readable code the API shows (`item_not_found`, `tenant_exists`). */
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** The thing asked for does not exist. */
export class NotFound extends DomainError {}

/** It clashes with what is stored: a name or id taken, a record changed meanwhile, a key held by another attempt. */
export class Conflict extends DomainError {}

/**
 * An Idempotency-Key whose request named a user erased since (shared/http/idempotency.ts): its
 * stored answer was forgotten, or its retry would write under ids the erasure covers.
 */
export const keyErased = () =>
  new Conflict('idempotency_key_erased', "This Idempotency-Key's request was stored, and a user it named was erased since: its answer is not kept. A new key stores its events again.");

/** The record is not in a state that allows this (a Published template edited, an unapproved version promoted). */
export class PreconditionFailed extends DomainError {
  constructor(message: string) {
    super('invalid_state', message);
  }
}

/** The input cannot be used as it is (unknown ids it names, a cursor not handed out). */
export class InvalidInput extends DomainError {
  readonly fieldErrors: FieldErrors | undefined;
  constructor(message: string, fieldErrors?: FieldErrors, code = 'validation_error') {
    super(code, message);
    this.fieldErrors = fieldErrors;
  }
}

/** Something the request must send is missing (the spec's `parameter_missing`). */
export class MissingInput extends InvalidInput {
  constructor(message: string, fieldErrors?: FieldErrors) {
    super(message, fieldErrors, 'parameter_missing');
  }
}

/** The caller's credential is not one this service issued, or no longer valid. */
export class Unauthenticated extends DomainError {
  constructor(message: string) {
    // The spec's sample code for every missing or invalid credential.
    super('unauthorized_no_client_id_in_jwt', message);
  }
}

/** The spec names `item_not_found` for a missing item and shows it for a missing event too. */
export class ItemNotFound extends NotFound {
  constructor(id: string | number) {
    super('item_not_found', `No item with id ${id}.`);
  }
}

export class EventNotFound extends NotFound {
  constructor(id: string | number) {
    super('item_not_found', `No event with id ${id}.`);
  }
}
