// See package.json: refusing to load turns Artillery's telemetry into a no-op.
throw new Error('telemetry is disabled in this project');
