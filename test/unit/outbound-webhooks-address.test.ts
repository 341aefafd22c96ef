import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  checkWebhookUrl,
  isPublicAddress,
  RefusedUrl,
} from '../../src/modules/outbound-webhooks/outbound-webhooks.address';
import { webhookSignature } from '../../src/modules/outbound-webhooks/outbound-webhooks.sender';

describe('the outbound webhook address rules', () => {
  it('a public unicast address only', () => {
    for (const address of ['8.8.8.8', '93.184.216.34', '2001:4860:4860::8888', '::ffff:8.8.8.8', '64:ff9b::8.8.8.8'])
      expect([address, isPublicAddress(address)]).toEqual([address, true]);
    for (const address of [
      '127.0.0.1',
      '10.0.0.1',
      '172.16.5.4',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '255.255.255.255',
      '224.0.0.1',
      '::1',
      '::',
      'fe80::1',
      'fd00:ec2::254',
      'fc00::1',
      '::ffff:127.0.0.1',
      '::ffff:169.254.169.254',
      'ff02::1',
      // IPv6 ranges embedding an IPv4 address (issue 40): reserved whatever they embed, but NAT64's well-known prefix
      '::127.0.0.1',
      '::7f00:1',
      '::808:808',
      '::ffff:0:8.8.8.8',
      '2002:808:808::1',
      '2002:7f00:1::1',
      '2001::1',
      '2001:0:4136:e378:8000:63bf:3fff:fdd2',
      '64:ff9b::127.0.0.1',
      '64:ff9b::10.0.0.1',
      '64:ff9b::169.254.169.254',
      '64:ff9b:1::808:808',
    ])
      expect([address, isPublicAddress(address)]).toEqual([address, false]);
  });

  it('https to a public address; http or a private address only where the allow-list names the host, the address or its range', async () => {
    await expect(checkWebhookUrl('https://93.184.216.34/in', [])).resolves.toMatchObject({
      address: '93.184.216.34',
      family: 4,
    });
    await expect(checkWebhookUrl('http://93.184.216.34/in', [])).rejects.toThrow(RefusedUrl);
    await expect(checkWebhookUrl('https://10.1.2.3/in', [])).rejects.toThrow(/private address/);
    await expect(checkWebhookUrl('https://[::ffff:10.1.2.3]/in', [])).rejects.toThrow(RefusedUrl);
    await expect(checkWebhookUrl('http://10.1.2.3/in', ['10.1.0.0/16'])).resolves.toMatchObject({
      address: '10.1.2.3',
    });
    await expect(checkWebhookUrl('https://[::ffff:10.1.2.3]/in', ['10.1.2.3'])).resolves.toMatchObject({ family: 6 });
    await expect(checkWebhookUrl('http://[fd00::5]/in', ['fd00::/8'])).resolves.toMatchObject({ family: 6 });
    await expect(checkWebhookUrl('https://10.2.0.1/in', ['10.1.0.0/16'])).rejects.toThrow(RefusedUrl);
    await expect(checkWebhookUrl('https://user:pw@93.184.216.34/in', [])).rejects.toThrow(/user name/);
    await expect(checkWebhookUrl('not a url', [])).rejects.toThrow(RefusedUrl);
    await expect(checkWebhookUrl('file:///etc/passwd', [])).rejects.toThrow(RefusedUrl);
  });
});

describe('the signature', () => {
  it('is t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">', () => {
    const at = new Date('2026-11-28T10:00:00Z');
    const t = at.getTime() / 1000;
    const expected = createHmac('sha256', 'whsec_x').update(`${t}.{"a":1}`).digest('hex');
    expect(webhookSignature('whsec_x', '{"a":1}', at)).toBe(`t=${t},v1=${expected}`);
  });
});
