<?php
require_once __DIR__ . '/lib/keeper.php';
DevFixtureKeeper::keep(str_repeat('x', 400_000));
echo 'memory';
