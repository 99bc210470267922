/**
 * The catalog item an event's `item_id` names: its id when the string is an item id as the catalog
 * writes it (a positive integer without a leading zero), else undefined. Clients treat IDs as
 * opaque strings, so "007" or "sku-7" name no item of the catalog, not item 7.
 */
export function catalogItemId(itemId: string): number | undefined {
  if (!/^[1-9][0-9]{0,15}$/.test(itemId)) return undefined;
  const id = Number(itemId);
  return Number.isSafeInteger(id) ? id : undefined;
}
