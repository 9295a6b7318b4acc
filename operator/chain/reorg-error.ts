/**
 * The chain reorganised below the history Core keeps (`REORG_HISTORY_BLOCKS` in indexer.ts): rewinding would
 * have to undo pruned events and would apply them twice. The indexer stops at this error until an
 * operator restores the store from a snapshot of the canonical chain or re-indexes into a new store.
 *
 * A module of its own so that the indexer (which throws it) and the sync monitor (which reports it)
 * need not import each other.
 */
export class ReorgTooDeepError extends Error {
  override readonly name = "ReorgTooDeepError";
}
