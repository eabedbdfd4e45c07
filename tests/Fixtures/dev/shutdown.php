<?php
// Ends its worker (the tier runs the function as exit() would): nothing outlives the request.
function dev_fixture_on_shutdown(): void {}
register_shutdown_function('dev_fixture_on_shutdown');
echo 'shutdown';
