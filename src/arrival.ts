import type { ConsolaInstance } from 'consola'
import type { Arrivals } from './contract/arrival.js'
import type { MailArrival, SvcHookable } from './contract/hooks.js'
import type { MailStore } from './contract/store.js'
import type { Email } from './contract/types.js'

/** Why an arrival was refused: a copy could not be kept (`storage`), or a `mail:received` handler threw (`veto`). */
export class ArrivalRefusedError extends Error {
  constructor(
    readonly stage: 'storage' | 'veto',
    readonly reason: Error,
  ) {
    super(reason.message)
  }
}

export function createArrivals(store: MailStore, hooks: SvcHookable, logger: ConsolaInstance): Arrivals {
  /** Every handler runs, whatever one before it threw: nothing can refuse an accepted message, and one failing listener silences no other. */
  const accept = (email: Email, arrival: MailArrival) =>
    hooks.callHookWith(
      async (handlers, args) => {
        for (const handler of handlers) {
          try {
            await handler(...args)
          } catch (error) {
            logger.error(`A mail:accepted handler failed on email ${email.id}: ${(error as Error).message}`)
          }
        }
      },
      'mail:accepted',
      [email, arrival],
    )

  return {
    async receive({ inboxes, keep, raw, origin }) {
      const kept: Email[] = []
      /** Nothing is acknowledged that was not kept whole, nor anything a handler refused. */
      const refuse = async (stage: ArrivalRefusedError['stage'], error: unknown): Promise<never> => {
        await Promise.all(
          kept.map((copy) =>
            store
              .inbox(copy.inbox)
              .remove(copy.id)
              .catch((removal: Error) => logger.error(`Could not take back email ${copy.id}: ${removal.message}`)),
          ),
        )
        throw new ArrivalRefusedError(stage, error as Error)
      }
      for (const inbox of inboxes) {
        try {
          kept.push(await keep(store.inbox(inbox)))
        } catch (error) {
          return refuse('storage', error)
        }
      }
      // One arrival for every copy: a listener counting messages, not copies, tells them apart by it.
      const arrival: MailArrival = { raw, origin, local: true }
      try {
        for (const copy of kept) await hooks.callHook('mail:received', copy, arrival)
      } catch (error) {
        return refuse('veto', error)
      }
      return async () => {
        for (const copy of kept) await accept(copy, arrival)
      }
    },
    announce: (email, raw) => accept(email, { raw, origin: 'remote', local: false }),
  }
}
