<?php
require_once __DIR__ . '/lib/memo.php';
echo 'memo ', dev_fixture_memo(), ' ', DevFixtureConfig::get();
