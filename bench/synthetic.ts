import { seededRandom } from '../shared/random.ts';

/** A deterministic catalog: product names and descriptions from Zipf-distributed vocabularies. */
export function syntheticCatalog(n: number): { name: string; description: string; metadata: { category: string; brand: string; price: number; availability: string } }[] {
  const rand = seededRandom(42);
  const syllables = ['ka', 'lo', 'mi', 'ra', 'ten', 'vor', 'ul', 'sa', 'dre', 'po', 'nix', 'ta', 'gel', 'bri', 'so', 'fa'];
  const word = (k: number) => {
    let w = '';
    let x = k + 7;
    do {
      w += syllables[x % syllables.length];
      x = Math.floor(x / syllables.length);
    } while (x > 0);
    return w;
  };
  const vocab = Array.from({ length: 20_000 }, (_, k) => word(k));
  const zipf = (size: number) => Math.min(size - 1, Math.floor(Math.exp(rand() * Math.log(size + 1)) - 1));
  const products = ['shoe', 'jacket', 'lamp', 'chair', 'table', 'kettle', 'backpack', 'watch', 'camera', 'blender', 'sofa', 'helmet', 'guitar', 'drill', 'tent', 'mug'];
  const adjectives = ['red', 'light', 'classic', 'compact', 'wireless', 'waterproof', 'vintage', 'ergonomic', 'smart', 'foldable', 'heavy', 'premium'];
  const categories = ['footwear', 'outdoor', 'home', 'kitchen', 'electronics', 'music', 'tools', 'furniture'];
  return Array.from({ length: n }, (_, i) => {
    const product = products[Math.floor(rand() * products.length)] as string;
    const adjective = adjectives[Math.floor(rand() * adjectives.length)] as string;
    const brand = word(zipf(500));
    const desc = Array.from({ length: 12 + Math.floor(rand() * 20) }, () => vocab[zipf(vocab.length)]).join(' ');
    return {
      name: `${adjective} ${brand} ${product} ${word(zipf(vocab.length))}`,
      description: `${desc} ${product}`,
      metadata: { category: categories[i % categories.length] as string, brand, price: 5 + Math.floor(rand() * 500), availability: rand() < 0.9 ? 'in_stock' : 'backorder' },
    };
  });
}
