import { POSITIVE_INT_PATTERN } from '../schemas/common.ts';

/**
 * The catalog item an event's `item_id` names: its id when the string is an item id as the catalog
 * writes it (a positive integer without a leading zero, within the safe integers), else undefined.
 * Clients treat IDs as opaque strings, so "007" or "sku-7" name no item of the catalog, not item 7.
 */
export function catalogItemId(itemId: string): number | undefined {
  if (!POSITIVE_INT_PATTERN.test(itemId)) return undefined;
  const id = Number(itemId);
  return Number.isSafeInteger(id) ? id : undefined;
}
