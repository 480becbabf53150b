/**
 * Inventory keeps a product's stock in one or more shards, each its own
 * aggregate, so that reservations of one product spread over several
 * partition keys. A reservation is an aggregate too: it remembers which
 * shards it took from, so that releasing, expiring or selling it returns
 * exactly that stock. Every shard holds `available + reserved + sold =
 * received` by construction, so their sum does too.
 *
 * Each aggregate's types, fold and decider is a file of its own, all pure
 * (the domain lint rule in biome.json holds them to it): shard.ts,
 * product.ts, reservation.ts, and holdings.ts (the per-caller limit). This
 * file is the module's domain as the rest of the module imports it.
 */
export * from './holdings';
export * from './product';
export * from './reservation';
export * from './shard';
