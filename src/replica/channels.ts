/**
 * Replica mode's pub/sub channels over one subscriber connection (a connection that
 * subscribes can run no other command). Each channel has one handler; the subscriptions are
 * made again at every reconnection.
 */
import { connectRedis, type Redis, warnOnChange } from './redis.js';

export class Channels {
  private readonly handlers = new Map<string, (message: Buffer) => void>();
  private readonly warn = warnOnChange('replica: a channel subscription failed');

  private constructor(private readonly sub: Redis) {
    sub.on('messageBuffer', (channel: Buffer, message: Buffer) => this.handlers.get(channel.toString())?.(message));
    sub.on('ready', () => {
      if (this.handlers.size) sub.subscribe(...this.handlers.keys()).catch(this.warn);
    });
  }

  static async open(url: string): Promise<Channels> {
    return new Channels(await connectRedis(url, 'wires-channels'));
  }

  /** Resolves once subscribed (or at once while Redis is unreachable: subscribed when it returns). */
  async listen(channel: string, handler: (message: Buffer) => void): Promise<void> {
    this.handlers.set(channel, handler);
    await this.sub.subscribe(channel).catch(this.warn);
  }

  async unlisten(channel: string): Promise<void> {
    this.handlers.delete(channel);
    await this.sub.unsubscribe(channel).catch(this.warn);
  }

  close(): void {
    this.sub.disconnect();
  }
}
