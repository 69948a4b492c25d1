// The smallest proof that the binary serves the playground: the health check
// answers and the landing page renders without a script error.
import { expect, test } from '@playwright/test';

test('the health check answers 200', async ({ request }) => {
  const response = await request.get('/healthz');
  expect(response.status()).toBe(200);
});

test('the landing page renders', async ({ page }) => {
  const pageErrors: Error[] = [];
  page.on('pageerror', (error) => pageErrors.push(error));

  const response = await page.goto('/');
  expect(response?.status()).toBe(200);
  await expect(page).toHaveTitle(/rvplay/i);
  await expect(page.getByTestId('landing')).toBeVisible();
  expect(pageErrors).toEqual([]);
});
