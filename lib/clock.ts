export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

export function addMs(date: Date, ms: number): Date {
  return new Date(date.getTime() + ms);
}

export function epochSeconds(date: Date): number {
  return Math.floor(date.getTime() / 1000);
}
